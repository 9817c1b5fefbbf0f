"""Parse-only start-up hook: run by the job's own interpreter as `python -c THIS ENTRY ARGS...`
(or `-m MODULE ARGS...`). It runs the job's program with exactly its argv, and stops it where its
parser hands back the configuration in force, printing that configuration as one JSON line
before anything trains. The program never reaches its model: each hook ends the process
(os._exit) at its parser's hand-over.

This file is read as text by runbook (runbook.asking.parse_only) and must stand alone: the job's
interpreter has the job's packages, not runbook's. Standard library only, Python 3.8 syntax.

Where each parser hands over (read in each library's own code):
- argparse: the outermost parse_known_args (parse_args, HfArgumentParser's
  parse_args_into_dataclasses, TRL's parser and simple_parsing go through it) that consumed the
  whole command line, on a parser with options of its own (a pre-parser of `--config` alone is
  let through). Where the program loaded a composer (mmengine, OmegaConf) it is recorded and
  the composer's hand-over is awaited.
- jsonargparse (LightningCLI, CLI()): its ArgumentParser.parse_args.
- click and typer: the leaf command's invoke, with the context's parameters.
- fire: the call of the routine the command line names.
- tyro: the parsed fields, before the callable is called.
- Hydra: run_job, with the composed config (before the output folder is made).
- OmegaConf: a merge that takes the command line's config (from_cli, from_dotlist).
- mmengine: Runner, with its Config (after --cfg-options were merged).
- HfArgumentParser.parse_dict (parse_yaml_file, parse_json_file).
- absl's app.run, when it calls main (its FLAGS parsed); Hydra's compose API.
- Last resort: the first torch.nn.Module built ends the run, with what was recorded (a parse
  that left words to another parser, a composer's config) or with the error that none handed
  over: a program is never run past its first model."""

import json
import os
import sys

_MARK = "\x1eRUNBOOK-PARSED "
_OUT = os.dup(1)  # the real stdout, whatever the program does with sys.stdout
_state = {"depth": 0, "pending": None, "composer": False}


def _plain(x, depth=0):
    """A JSON-able copy of a parsed value: containers walked, objects named."""
    import dataclasses
    import enum

    if depth > 12:
        return "<deep>"
    if x is None or isinstance(x, (bool, int, float, str)):
        return x
    if isinstance(x, enum.Enum):
        return x.name
    if isinstance(x, dict):
        return {str(k): _plain(v, depth + 1) for k, v in list(x.items())[:2000]}
    if isinstance(x, (list, tuple, set, frozenset)):
        return [_plain(v, depth + 1) for v in list(x)[:2000]]
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return {f.name: _plain(getattr(x, f.name, None), depth + 1) for f in dataclasses.fields(x)}
    for attr in ("to_dict", "as_dict"):  # mmengine's Config, jsonargparse's Namespace
        fn = getattr(x, attr, None)
        if callable(fn) and not isinstance(x, type):
            try:
                return _plain(fn(), depth + 1)
            except Exception:
                pass
    if type(x).__name__ in ("DictConfig", "ListConfig"):
        return _plain(_omega_container(x), depth + 1)
    if type(x).__name__ == "Namespace" or (
        hasattr(x, "__dict__") and type(x).__module__ == "argparse"
    ):
        return _plain(vars(x), depth + 1)
    if hasattr(x, "__fspath__"):
        return os.fspath(x)
    return f"<{type(x).__name__}>"


def _omega_container(cfg):
    from omegaconf import OmegaConf

    try:
        return OmegaConf.to_container(cfg, resolve=True)
    except Exception:
        return OmegaConf.to_container(cfg, resolve=False)


def _done(library, config, options=None, note=None):
    """Print the configuration in force and end the program: nothing after its parser runs."""
    doc = {"library": library, "config": _plain(config)}
    if options:
        doc["options"] = options
    if note:
        doc["note"] = note
    try:
        text = json.dumps(doc, default=str)
    except Exception as e:  # a value JSON cannot hold: say so rather than print half
        text = json.dumps({"library": library, "error": f"not JSON: {e}"})
    os.write(_OUT, (_MARK + text + "\n").encode())
    os._exit(0)


def _inside(fn):
    """Run a parser's call with the depth counted: only the outermost call hands over."""

    def call(*a, **k):
        _state["depth"] += 1
        try:
            return fn(*a, **k)
        finally:
            _state["depth"] -= 1

    return call


def _argparse_options(parser):
    """{dest: [option strings]} of a parser and its subparsers: how each value is spelled."""
    import argparse

    out = {}
    for act in getattr(parser, "_actions", []):
        if isinstance(act, argparse._SubParsersAction):
            for sub in act.choices.values():
                out.update(_argparse_options(sub))
        elif act.option_strings and act.dest not in ("help",):
            out[act.dest] = list(act.option_strings)
    return out


def _hook_argparse():
    import argparse

    orig = argparse.ArgumentParser.parse_known_args

    def parse_known_args(self, args=None, namespace=None):
        outer = _state["depth"] == 0
        ns, extras = _inside(orig)(self, args, namespace)
        options = _argparse_options(self)
        own = [a for a in self._actions if a.dest != "help"]
        if outer and len(own) > 1 and not _library_caller():
            if extras:  # words left to another parser: kept for the first model's tripwire only
                _state["partial"] = ("argparse", ns, options)  # (argparse's error must win)
            elif _state["composer"] or _composer_loaded():
                _state["pending"] = ("argparse", ns, options)  # a composer comes after it
            else:
                _done("argparse", ns, options)
        return ns, extras

    argparse.ArgumentParser.parse_known_args = parse_known_args


# Libraries that parse their own flags with argparse before the program's parser runs (fire's
# `-- --verbose`, Hydra's `--cfg`/overrides): their parse is not the program's configuration.
_OWN_FLAGS = ("fire.", "hydra.", "tyro.", "typer.", "click.")


def _library_caller():
    f = sys._getframe(2)
    while f is not None and f.f_globals.get("__name__", "").startswith("argparse"):
        f = f.f_back
    name = (f.f_globals.get("__name__", "") if f is not None else "") + "."
    return name.startswith(_OWN_FLAGS)


def _composer_loaded():
    return any(m in sys.modules for m in ("mmengine.config", "mmcv")) or (
        "omegaconf" in sys.modules and "hydra" not in sys.modules
    )


def _hook_jsonargparse(mod):
    cls = mod.ArgumentParser
    orig = cls.parse_args

    def parse_args(self, *a, **k):
        outer = _state["depth"] == 0
        cfg = _inside(orig)(self, *a, **k)
        if outer:
            _done("jsonargparse", cfg)
        return cfg

    cls.parse_args = parse_args


def _hook_click(mod):
    orig = mod.Command.invoke

    def invoke(self, ctx):
        if hasattr(self, "commands") or _state["depth"]:  # a group: its subcommand hands over
            return orig(self, ctx)
        params, c = {}, ctx
        while c is not None:  # the leaf's own parameters win over its groups'
            for k, v in (c.params or {}).items():
                params.setdefault(k, v)
            c = c.parent
        options = {p.name: list(p.opts) for p in self.params if getattr(p, "opts", None)}
        _done(
            "click", params, {k: v for k, v in options.items() if any(o.startswith("-") for o in v)}
        )

    mod.Command.invoke = invoke


def _hook_fire(mod):
    import inspect

    orig = mod._CallAndUpdateTrace

    def call(component, args, component_trace, treatment="class", target=None):
        fn = component.__call__ if treatment == "callable" else component
        try:
            parse = mod._MakeParseFn(fn, mod.decorators.GetMetadata(component))
            (varargs, kwargs), _, remaining, _ = parse(args)
            bound = inspect.signature(fn).bind_partial(*varargs, **kwargs)
            bound.apply_defaults()
        except Exception:
            return orig(component, args, component_trace, treatment, target)
        if not remaining:
            _done("fire", dict(bound.arguments))
        if treatment == "class":  # its constructor holds the settings; its method is not run
            _done(
                "fire",
                dict(bound.arguments),
                note=f"the class's constructor: {remaining[0]} not run",
            )
        return orig(component, args, component_trace, treatment, target)

    mod._CallAndUpdateTrace = call


def _hook_tyro(mod):
    import functools
    import inspect

    orig = mod.callable_with_args

    def callable_with_args(f, parser_spec, default_instance, values, field_name_prefix, *a, **k):
        get_out, used = orig(f, parser_spec, default_instance, values, field_name_prefix, *a, **k)
        if field_name_prefix != "" or _state["depth"]:
            return get_out, used
        if isinstance(get_out, functools.partial) and not isinstance(get_out.func, type):
            try:  # a function: its arguments as bound, without calling it
                bound = inspect.signature(get_out.func).bind_partial(
                    *get_out.args, **get_out.keywords
                )
                bound.apply_defaults()
                _done("tyro", dict(bound.arguments))
            except (TypeError, ValueError):
                pass
        _done("tyro", get_out())  # a dataclass or a dict built from the parse: no training in it
        return get_out, used

    mod.callable_with_args = callable_with_args


def _hydra_run_job(*a, **k):
    config = k.get("config", a[2] if len(a) > 2 else None)

    try:
        from hydra.core.hydra_config import HydraConfig

        HydraConfig.instance().set_config(config)
    except Exception:
        pass
    _done("hydra", _task(config))


def _task(config):
    """A Hydra config without Hydra's own node: the job's configuration."""
    from omegaconf import OmegaConf, open_dict

    task = OmegaConf.create(OmegaConf.to_container(config, resolve=False))
    with open_dict(task):
        task.pop("hydra", None)
    return task


def _hook_hydra(mod):
    if hasattr(mod, "run_job"):
        mod.run_job = _hydra_run_job


def _hook_omegaconf(mod):
    oc = mod.OmegaConf
    cli_made = []
    for name in ("from_cli", "from_dotlist"):
        orig = getattr(oc, name)

        def made(*a, _orig=orig, **k):
            cfg = _orig(*a, **k)
            cli_made.append(id(cfg))
            _state["composer"] = True
            _state["pending"] = _state["pending"] or ("omegaconf", cfg, None)
            return cfg

        setattr(oc, name, staticmethod(made))
    orig_merge = oc.merge

    def merge(*configs):
        out = orig_merge(*configs)
        if _state["depth"] == 0 and "hydra" not in sys.modules:
            if any(id(c) in cli_made for c in configs):
                _done("omegaconf", out, note="the merge that takes the command line")
            _state["pending"] = ("omegaconf", out, None)
        return out

    oc.merge = staticmethod(merge)


def _hook_mmengine(mod):
    cls = mod.Runner

    def from_cfg(klass, cfg):
        _done("mmengine", cfg, _pending_options())

    cls.from_cfg = classmethod(from_cfg)


def _hook_mmengine_config(mod):
    """A Config read or merged is the program's config so far; the Runner (or the program's
    end) hands it over."""
    cls = mod.Config
    kind = type(cls.__dict__["fromfile"])  # a staticmethod in mmengine 0.10, a classmethod before
    orig_fromfile = cls.__dict__["fromfile"].__func__
    orig_merge = cls.merge_from_dict

    def fromfile(*a, **k):
        cfg = orig_fromfile(*a, **k)
        _state["pending"] = ("mmengine", cfg, _pending_options())
        return cfg

    def merge_from_dict(self, *a, **k):
        out = orig_merge(self, *a, **k)
        _state["pending"] = ("mmengine", self, _pending_options())
        return out

    cls.fromfile = kind(fromfile)
    cls.merge_from_dict = merge_from_dict


def _pending_options():
    p = _state["pending"]
    return p[2] if p else None


def _hook_hf(mod):
    cls = mod.HfArgumentParser
    orig = cls.parse_dict

    def parse_dict(self, args, *a, **k):
        outer = _state["depth"] == 0
        out = _inside(orig)(self, args, *a, **k)
        if outer:
            merged = {}
            for obj in out:
                merged.update(_plain(obj))
            _done("HfArgumentParser.parse_dict", merged)
        return out

    cls.parse_dict = parse_dict


def _importing():
    f = sys._getframe(2)
    while f is not None:
        if f.f_code.co_filename.startswith("<frozen importlib"):
            return True
        f = f.f_back
    return False


def _hook_torch_module(mod):
    cls = mod.Module
    orig = cls.__init__

    def init(self, *a, **k):
        # The last line of defence: whatever happens, nothing past the first model is run. A
        # module a library builds while it is imported (transformers' activations) is no model.
        if _importing():
            return orig(self, *a, **k)
        p = _state["pending"] or _state.get("partial")
        if p is not None:
            _done(
                p[0], p[1], p[2], note="the first model built: the program's last composed config"
            )
        text = json.dumps({"error": "it built its model before a parser runbook reads handed over"})
        os.write(_OUT, (_MARK + text + "\n").encode())
        os._exit(3)

    cls.__init__ = init


def _hook_distributed(mod):
    """A program that joins its process group before its parser hands over would wait for ranks
    that are not there (its recorded MASTER_ADDR is its node's): it is stopped at once and says
    so, never left to hang until the time limit."""

    def init_process_group(*a, **k):
        p = _state["pending"]
        if p is not None:
            _done(
                p[0],
                p[1],
                p[2],
                note="its last composed config, before it joined its process group",
            )
        text = json.dumps(
            {
                "error": "it joins its process group before its parser hands over: runbook does not join it"
            }
        )
        os.write(_OUT, (_MARK + text + "\n").encode())
        os._exit(3)

    mod.init_process_group = init_process_group
    if "torch.distributed" in sys.modules:
        sys.modules["torch.distributed"].init_process_group = init_process_group


def _hook_absl(mod):
    """absl's app.run: the flags are parsed when it calls main; the program's main never runs."""
    orig = mod._run_main

    def run_main(main, argv):
        if _state["depth"]:
            return orig(main, argv)
        from absl import flags

        values = flags.FLAGS.flag_values_dict()
        _done("absl", values, {k: ["--" + k] for k in values})

    mod._run_main = run_main


def _hook_hydra_compose(mod):
    """Hydra's compose API (initialize, then compose with the command line's overrides)."""
    orig = mod.compose

    def compose(*a, **k):
        cfg = orig(*a, **k)
        if not _state["depth"]:
            _done("hydra", _task(cfg), note="its compose API")
        return cfg

    mod.compose = compose


_AFTER = {
    "jsonargparse": _hook_jsonargparse,
    "click.core": _hook_click,
    "typer._click.core": _hook_click,
    "fire.core": _hook_fire,
    "tyro._calling": _hook_tyro,
    "hydra.core.utils": _hook_hydra,
    "hydra._internal.hydra": _hook_hydra,
    "omegaconf": _hook_omegaconf,
    "mmengine.runner": _hook_mmengine,
    "mmengine.config.config": _hook_mmengine_config,
    "transformers.hf_argparser": _hook_hf,
    "torch.nn.modules.module": _hook_torch_module,
    "torch.distributed.distributed_c10d": _hook_distributed,
    "absl.app": _hook_absl,
    "hydra.compose": _hook_hydra_compose,
}


class _Loader:
    """A module's own loader, with runbook's hook applied once the module has run."""

    def __init__(self, loader, hook):
        self._loader, self._hook = loader, hook

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        try:
            self._hook(module)
        except Exception as e:  # a library version whose shape differs: say so, run on
            sys.stderr.write(f"runbook parse-only: no hook for {module.__name__} ({e})\n")

    def __getattr__(self, name):
        return getattr(self._loader, name)


class _Finder:
    """Finds nothing itself: wraps the loader of the modules runbook hooks."""

    def find_spec(self, name, path=None, target=None):
        hook = _AFTER.get(name)
        if hook is None:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _Loader(spec.loader, hook)
                return spec
        return None


def main():
    _hook_argparse()
    for name, hook in _AFTER.items():
        if name in sys.modules:
            hook(sys.modules[name])
    sys.meta_path.insert(0, _Finder())
    try:
        _run(sys.argv[1:])
    except BaseException as e:  # after composing: what it had composed; before: its own error
        _pending_at_end(f"the program stopped ({type(e).__name__}) after it")
        raise
    os.write(
        _OUT,
        (
            _MARK + json.dumps({"error": "the program ended without a parser runbook hooks"}) + "\n"
        ).encode(),
    )
    os._exit(3)


def _pending_at_end(how):
    p = _state["pending"]
    if p is not None:
        _done(p[0], p[1], p[2], note=f"{how}: its last composed config")


def _run(argv):
    import runpy

    if argv[:1] == ["-m"]:
        sys.argv = [argv[1], *argv[2:]]
        sys.path.insert(0, os.getcwd())
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = list(argv)
        sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
        runpy.run_path(argv[0], run_name="__main__")
    _pending_at_end("the program ended")


main()

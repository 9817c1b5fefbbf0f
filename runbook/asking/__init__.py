"""What the real thing says (docs/design.md §3.2.2): the job's own program asked, below the rungs.
parse_only runs its parser parse-only (the hook in _boot.py) and reads the answer; roles names the
micro-batch and the accumulation in it by the program's own words; fix decides the micro-batch
edit on that parser and proves it there. planning.ask (the older questions: --help,
--print_config, --cfg job) is asked where the parser cannot be."""

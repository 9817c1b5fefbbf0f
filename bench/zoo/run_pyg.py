"""A PyTorch Geometric node classifier as its examples write one (CPU): a GCN layer and a linear
head on a small random graph, full-batch, the examples' per-epoch line ("Epoch: 001, Loss: ...,
Train: ..., Val: ..., Test: ...") from a test() under torch.no_grad, the model saved with
torch.save each epoch. `--resume` loads it with torch.load and trains on."""

import sys

import oomshot

oomshot.arm()

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch_geometric.data import Data  # noqa: E402
from torch_geometric.nn import GCNConv  # noqa: E402

g = torch.Generator().manual_seed(0)
n = 60
edge_index = torch.randint(0, n, (2, 240), generator=g)
data = Data(x=torch.randn(n, 16, generator=g), edge_index=edge_index,
            y=torch.randint(0, 4, (n,), generator=g))  # fmt: skip
data.train_mask = torch.arange(n) < 40
data.val_mask = (torch.arange(n) >= 40) & (torch.arange(n) < 50)
data.test_mask = torch.arange(n) >= 50


class GCN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = GCNConv(16, 32)
        self.lin = torch.nn.Linear(32, 4)

    def forward(self, x, edge_index):
        return self.lin(F.relu(self.conv1(x, edge_index)))


model = GCN().to("cpu")
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
if "--resume" in sys.argv:
    print("Resuming from gcn.pt")
    model.load_state_dict(torch.load("gcn.pt"))


def train():
    model.train()
    optimizer.zero_grad()
    out = model(data.x, data.edge_index)
    loss = F.cross_entropy(out[data.train_mask], data.y[data.train_mask])
    loss.backward()
    optimizer.step()
    return float(loss)


@torch.no_grad()
def test():
    model.eval()
    pred = model(data.x, data.edge_index).argmax(dim=-1)
    return [
        float((pred[m] == data.y[m]).float().mean())
        for m in (data.train_mask, data.val_mask, data.test_mask)
    ]


for epoch in range(1, 21 if "--resume" not in sys.argv else 31):
    loss = train()
    train_acc, val_acc, test_acc = test()
    torch.save(model.state_dict(), "gcn.pt")
    print(f"Epoch: {epoch:03d}, Loss: {loss:.4f}, Train: {train_acc:.4f}, "
          f"Val: {val_acc:.4f}, Test: {test_acc:.4f}")  # fmt: skip

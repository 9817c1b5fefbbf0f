"""A MONAI classification loop as its tutorials write one (CPU): a MONAI network and loss, the
tutorial's prints ("epoch 1/2", "3/20, train_loss: ..."), a validation pass every epoch under
torch.no_grad in the loop itself, the best model saved with torch.save. `--resume` loads it with
torch.load and trains on."""

import sys

import oomshot

oomshot.arm()

import torch  # noqa: E402
from monai.networks.nets import FullyConnectedNet  # noqa: E402
from tiny import loader  # noqa: E402

device = torch.device("cpu")
model = FullyConnectedNet(16, 4, hidden_channels=(32,)).to(device)
loss_function = torch.nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), 1e-3)
train_loader, val_loader = loader(80), loader(24)
if "--resume" in sys.argv:
    print("loading best_metric_model.pth")
    model.load_state_dict(torch.load("best_metric_model.pth"))
best_metric, best_metric_epoch = -1, -1
max_epochs = 2
for epoch in range(max_epochs):
    print("-" * 10)
    print(f"epoch {epoch + 1}/{max_epochs}")
    model.train()
    epoch_loss, step = 0, 0
    for batch_data in train_loader:
        step += 1
        inputs, labels = batch_data[0].to(device), batch_data[1].to(device)
        optimizer.zero_grad()
        outputs = model(inputs)
        loss = loss_function(outputs, labels)
        loss.backward()
        optimizer.step()
        epoch_loss += loss.item()
        print(f"{step}/{len(train_loader)}, train_loss: {loss.item():.4f}")
    print(f"epoch {epoch + 1} average loss: {epoch_loss / step:.4f}")
    model.eval()
    with torch.no_grad():
        num_correct, metric_count = 0.0, 0
        for val_data in val_loader:
            val_images, val_labels = val_data[0].to(device), val_data[1].to(device)
            val_outputs = model(val_images)
            num_correct += (val_outputs.argmax(dim=1) == val_labels).sum().item()
            metric_count += len(val_labels)
        metric = num_correct / metric_count
        if metric > best_metric:
            best_metric, best_metric_epoch = metric, epoch + 1
            torch.save(model.state_dict(), "best_metric_model.pth")
            print("saved new best metric model")
        print(
            f"current epoch: {epoch + 1} current accuracy: {metric:.4f}"
            f" best accuracy: {best_metric:.4f} at epoch: {best_metric_epoch}"
        )

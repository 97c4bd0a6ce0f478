#!/usr/bin/python3
"""PyTorch yardstick for `make bench` and `kernels/gpu-check`: one SGD training step of the networks
that fedbayes's BenchmarkStep measures (fedbayes/models/step_bench_test.go), and optionally one
federated round of the Ozer et al. (2022) setting that fedbayes's BenchmarkRound measures
(fedbayes/engine/bench_test.go), run the way a PyTorch user writes it: one client after another.

Run by `make bench-torch` with Debian's python3-torch (CPU, ONE thread: with two threads on a loaded
2-core machine PyTorch's throughput collapses, which would flatter fedbayes), and by kernels/gpu-check
with `--device cuda` on a GPU machine. It prints lines in the format of `go test -bench`
("BenchmarkStep/NAME-1  N  NS ns/op  S samples/s"), so that fedbayes's benchsummary can put both side
by side. Batch 64 prints as BenchmarkStep, another batch B as BenchmarkStepB<B>, the round as
BenchmarkRound/lenet/sequential with its s/round, examples/s and eval-s/1k.

Options: --device cpu|cuda, --batch B[,B...] (default 64), --round (needs Fashion-MNIST's four gzip
files in $FEDBAYES_DATA/fashion-mnist), --round-examples N (use only the first N training images, for
quick checks; default all 60,000). COUNT (default 5) and STEPS (default 100) from the environment.

The models follow fedbayes's definitions:
  mlp          784-100-10, ReLU
  bayes-mlp    the same with mean-field Gaussian weights and biases, local reparameterisation
               (Kingma et al. 2015), log-variance parameterisation, KL to N(0, 1) scaled by 1/N
  lenet        conv 5x5 (6) - ReLU - maxpool 2 - conv 5x5 (16) - ReLU - maxpool 2 - 120 - 84 - 10
  bayes-lenet  LeNet with its three dense layers variational (Ozer et al. 2022), as bayes-mlp
"""
import argparse
import gzip
import math
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

DATASET_SIZE = 60000
INIT_LOGVAR = -6.0  # fedbayes's models.DefaultInitLogVar (sigma = 0.05, TFP's mean-field start; docs/models.md)


class VarLinear(nn.Module):
    """Mean-field Gaussian dense layer, sampled by local reparameterisation."""

    def __init__(self, fan_in, fan_out):
        super().__init__()
        self.w_mu = nn.Parameter(torch.randn(fan_in, fan_out) * math.sqrt(2.0 / fan_in))
        self.w_logvar = nn.Parameter(torch.full((fan_in, fan_out), INIT_LOGVAR))
        self.b_mu = nn.Parameter(torch.zeros(fan_out))
        self.b_logvar = nn.Parameter(torch.full((fan_out,), INIT_LOGVAR))

    def forward(self, x):
        w_var = self.w_logvar.clamp(-20, 8).exp()
        b_var = self.b_logvar.clamp(-20, 8).exp()
        mean = x @ self.w_mu + self.b_mu
        var = (x * x) @ w_var + b_var
        return mean + var.sqrt() * torch.randn_like(mean)

    def kl(self):
        total = 0.0
        for mu, logvar in ((self.w_mu, self.w_logvar), (self.b_mu, self.b_logvar)):
            lv = logvar.clamp(-20, 8)
            total = total + 0.5 * (lv.exp() + mu * mu - 1.0 - lv).sum()
        return total


def dense(fan_in, fan_out, bayes):
    return VarLinear(fan_in, fan_out) if bayes else nn.Linear(fan_in, fan_out)


class MLP(nn.Module):
    def __init__(self, bayes):
        super().__init__()
        self.l1, self.l2 = dense(784, 100, bayes), dense(100, 10, bayes)

    def forward(self, x):
        return self.l2(F.relu(self.l1(x.flatten(1))))


class LeNet(nn.Module):
    def __init__(self, bayes):
        super().__init__()
        self.c1, self.c2 = nn.Conv2d(1, 6, 5), nn.Conv2d(6, 16, 5)
        self.d1, self.d2, self.d3 = dense(256, 120, bayes), dense(120, 84, bayes), dense(84, 10, bayes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.c1(x)), 2)
        x = F.max_pool2d(F.relu(self.c2(x)), 2)
        x = F.relu(self.d1(x.flatten(1)))
        return self.d3(F.relu(self.d2(x)))


def kl_of(model):
    return sum(m.kl() for m in model.modules() if isinstance(m, VarLinear))


def sync(device):
    """Waits for the device's queued work, so that a timer reads finished work."""
    if device.type == "cuda":
        torch.cuda.synchronize()


def bench(name, model, steps, batch, device):
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(batch, 1, 28, 28, device=device)
    y = torch.randint(0, 10, (batch,), device=device)
    bayes = any(isinstance(m, VarLinear) for m in model.modules())

    def step():
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        if bayes:
            loss = loss + kl_of(model) / DATASET_SIZE
        loss.backward()
        opt.step()

    for _ in range(5):
        step()
    sync(device)
    start = time.perf_counter()
    for _ in range(steps):
        step()
    sync(device)
    elapsed = time.perf_counter() - start
    ns = elapsed / steps * 1e9
    bench_name = "BenchmarkStep" if batch == 64 else f"BenchmarkStepB{batch}"
    print(f"{bench_name}/{name}-1 \t{steps}\t{ns:.0f} ns/op\t{batch * steps / elapsed:.1f} samples/s", flush=True)


def read_idx_gz(path):
    """Reads an IDX file (LeCun et al.'s MNIST format) compressed with gzip into a uint8 tensor."""
    with gzip.open(path, "rb") as f:
        raw = f.read()
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] != 8:
        raise ValueError(f"{path}: not an unsigned-byte IDX file")
    ndim = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    n = math.prod(dims)
    body = raw[4 + 4 * ndim:]
    if len(body) != n:
        raise ValueError(f"{path}: {len(body)} bytes of data, the header says {n}")
    return torch.frombuffer(bytearray(body), dtype=torch.uint8).reshape(dims)


def load_fashion(device, examples):
    """Fashion-MNIST from $FEDBAYES_DATA/fashion-mnist, scaled to [0, 1], on the device."""
    root = os.path.join(os.environ.get("FEDBAYES_DATA", os.path.expanduser("~/.cache/fedbayes/data")), "fashion-mnist")

    def images(name):
        return (read_idx_gz(os.path.join(root, name)).float() / 255.0).unsqueeze(1).to(device)

    def labels(name):
        return read_idx_gz(os.path.join(root, name)).long().to(device)

    xtr, ytr = images("train-images-idx3-ubyte.gz"), labels("train-labels-idx1-ubyte.gz")
    xte, yte = images("t10k-images-idx3-ubyte.gz"), labels("t10k-labels-idx1-ubyte.gz")
    if examples:
        xtr, ytr = xtr[:examples], ytr[:examples]
    return xtr, ytr, xte, yte


def federated_round(global_model, clients, xtr, ytr, device, gen):
    """One round: each client in turn copies the global model, trains one epoch (batch 64, SGD with
    momentum 0.9, lr 0.01, KL over its own size), then the server averages the clients' posteriors
    weighted by size: means arithmetically, variances by precision (GAA of Ozer et al. 2022)."""
    states = []
    for idx in clients:
        model = LeNet(True).to(device)
        model.load_state_dict(global_model.state_dict())
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        order = idx[torch.randperm(len(idx), generator=gen, device="cpu").to(device)]
        for start in range(0, len(order) - 63, 64):
            b = order[start:start + 64]
            opt.zero_grad()
            loss = F.cross_entropy(model(xtr[b]), ytr[b]) + kl_of(model) / len(idx)
            loss.backward()
            opt.step()
        states.append((len(idx), model.state_dict()))
    total = sum(n for n, _ in states)
    merged = {}
    for key in states[0][1]:
        if key.endswith("logvar"):
            precision = sum(n / total * torch.exp(-st[key].clamp(-20, 8)) for n, st in states)
            merged[key] = -torch.log(precision)
        else:
            merged[key] = sum(n / total * st[key] for n, st in states)
    global_model.load_state_dict(merged)


@torch.no_grad()
def evaluate(model, xte, yte, samples=10, batch=1000):
    """Accuracy of the predictive mean over `samples` draws of the weights on the test set."""
    correct = 0
    for start in range(0, len(xte), batch):
        x = xte[start:start + batch]
        probs = sum(F.softmax(model(x), dim=1) for _ in range(samples)) / samples
        correct += (probs.argmax(1) == yte[start:start + batch]).sum().item()
    return correct / len(xte)


def bench_round(device, count, examples):
    """Times the federated round of BenchmarkRound (10 IID clients, E = 1, Bayesian LeNet) with the
    clients trained one after another, and the evaluation with M = 10 samples apart."""
    xtr, ytr, xte, yte = load_fashion(device, examples)
    gen = torch.Generator().manual_seed(0)
    perm = torch.randperm(len(xtr), generator=gen).to(device)
    clients = perm.chunk(10)
    model = LeNet(True).to(device)
    federated_round(model, clients, xtr, ytr, device, gen)  # warm-up (cuDNN autotuning, allocator)
    for _ in range(count):
        sync(device)
        start = time.perf_counter()
        federated_round(model, clients, xtr, ytr, device, gen)
        sync(device)
        train = time.perf_counter() - start
        start = time.perf_counter()
        acc = evaluate(model, xte, yte)
        sync(device)
        ev = time.perf_counter() - start
        print(f"BenchmarkRound/lenet/sequential-1 \t1\t{train * 1e9:.0f} ns/op\t{train:.3f} s/round\t"
              f"{len(xtr) / train:.1f} examples/s\t{ev / len(xte) * 1000:.4f} eval-s/1k\t{acc:.4f} accuracy", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--batch", default="64", help="batch sizes, comma-separated")
    ap.add_argument("--round", action="store_true", help="also time one federated round")
    ap.add_argument("--round-examples", type=int, default=0, help="training images for the round (0: all)")
    ap.add_argument("--no-steps", action="store_true", help="skip the step benchmarks")
    args = ap.parse_args()
    count = int(os.environ.get("COUNT", "5"))
    steps = int(os.environ.get("STEPS", "100"))
    if args.device == "cuda" and not torch.cuda.is_available():
        print("bench-torch: --device cuda, but torch.cuda.is_available() is False", file=sys.stderr)
        return 1
    device = torch.device(args.device)
    if device.type == "cpu":
        torch.set_num_threads(1)
        where = "1 thread"
    else:
        torch.backends.cudnn.benchmark = True
        where = torch.cuda.get_device_name(0)
    print(f"# PyTorch {torch.__version__}, {where}\npkg: pytorch")
    batches = [int(b) for b in args.batch.split(",") if b]
    for _ in range(count if not args.no_steps else 0):
        for batch in batches:
            for name, model in (("mlp", MLP(False)), ("bayes-mlp", MLP(True)),
                                ("lenet", LeNet(False)), ("bayes-lenet", LeNet(True))):
                bench(name, model.to(device), steps, batch, device)
    if args.round:
        bench_round(device, count, args.round_examples)
    return 0


if __name__ == "__main__":
    sys.exit(main())

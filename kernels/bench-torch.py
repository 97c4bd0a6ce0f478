#!/usr/bin/python3
"""PyTorch yardstick for `make bench`: one SGD training step at batch 64 of the networks that
fedbayes's BenchmarkStep measures (fedbayes/models/step_bench_test.go), on ONE thread.

Run by `make bench-torch` with Debian's python3-torch. It prints lines in the format of `go test
-bench` ("BenchmarkStep/NAME-1  N  NS ns/op  S samples/s"), so that fedbayes's benchsummary can put
both side by side. One thread: with two threads on a loaded 2-core machine PyTorch's throughput
collapses, which would flatter fedbayes.

The models follow fedbayes's definitions:
  mlp          784-100-10, ReLU
  bayes-mlp    the same with mean-field Gaussian weights and biases, local reparameterisation
               (Kingma et al. 2015), log-variance parameterisation, KL to N(0, 1) scaled by 1/N
  lenet        conv 5x5 (6) - ReLU - maxpool 2 - conv 5x5 (16) - ReLU - maxpool 2 - 120 - 84 - 10
  bayes-lenet  LeNet with its three dense layers variational (Ozer et al. 2022), as bayes-mlp
"""
import math
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_num_threads(1)
torch.manual_seed(0)

BATCH = 64
DATASET_SIZE = 60000


class VarLinear(nn.Module):
    """Mean-field Gaussian dense layer, sampled by local reparameterisation."""

    def __init__(self, fan_in, fan_out):
        super().__init__()
        self.w_mu = nn.Parameter(torch.randn(fan_in, fan_out) * math.sqrt(2.0 / fan_in))
        self.w_logvar = nn.Parameter(torch.full((fan_in, fan_out), -10.0))
        self.b_mu = nn.Parameter(torch.zeros(fan_out))
        self.b_logvar = nn.Parameter(torch.full((fan_out,), -10.0))

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


def bench(name, model, steps):
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(BATCH, 1, 28, 28)
    y = torch.randint(0, 10, (BATCH,))
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
    start = time.perf_counter()
    for _ in range(steps):
        step()
    elapsed = time.perf_counter() - start
    ns = elapsed / steps * 1e9
    print(f"BenchmarkStep/{name}-1 \t{steps}\t{ns:.0f} ns/op\t{BATCH * steps / elapsed:.1f} samples/s", flush=True)


def main():
    count = int(os.environ.get("COUNT", "5"))
    steps = int(os.environ.get("STEPS", "100"))
    print(f"# PyTorch {torch.__version__}, 1 thread\npkg: pytorch")
    for _ in range(count):
        for name, model in (("mlp", MLP(False)), ("bayes-mlp", MLP(True)),
                            ("lenet", LeNet(False)), ("bayes-lenet", LeNet(True))):
            bench(name, model, steps)
    return 0


if __name__ == "__main__":
    sys.exit(main())

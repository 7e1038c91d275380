#!/usr/bin/python3
"""One training step of the Fashion-MNIST demo's CNN in PyTorch (Debian's python3-torch 1.13):
the same network as examples/fashion_mnist_net.h, batch 64, forward + cross-entropy + backward +
optimizer step. Prints one line per optimizer: `<name> <ms per step>` (the median of --repeats
timed blocks). Run by scripts/compare-train-step.sh with /usr/bin/python3.

With --json FILE it also times the MLP 784-256-256-10 SGD step of benchmarks/bench_mlp_step.cpp
and both steps at every batch of --batches, and the transformer and LSTM steps of
benchmarks/bench_sequence_step.cpp, and writes them under the names of wick's benchmarks
(BM_TrainStepAdam/64, BM_MlpStepSGD/64, BM_TransformerStep/32, ...), for
scripts/run-benchmarks.sh.

With --sequence it prints the transformer and LSTM steps instead of the CNN's
(scripts/compare-train-step.sh)."""
import argparse
import json
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def make_net(c1=16, c2=32, hidden=128):
    return nn.Sequential(
        nn.Conv2d(1, c1, 3, padding=1), nn.MaxPool2d(2), nn.ReLU(),
        nn.Conv2d(c1, c2, 3, padding=1), nn.MaxPool2d(2), nn.ReLU(),
        nn.Flatten(), nn.Linear(c2 * 7 * 7, hidden), nn.ReLU(), nn.Linear(hidden, 10))


def make_mlp():
    return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))


# The sequence models of benchmarks/bench_sequence_step.cpp (same sizes; keep the two in step).
SEQ, MODEL, HEADS, FEED_FORWARD, CLASSES = 64, 128, 4, 512, 96
LSTM_SEQ, LSTM_IN, LSTM_HIDDEN = 32, 64, 128


class TransformerNet(nn.Module):
    def __init__(self):
        super().__init__()
        def block():
            return nn.TransformerEncoderLayer(MODEL, HEADS, dim_feedforward=FEED_FORWARD, dropout=0.0,
                                              activation="gelu", batch_first=True, norm_first=True)
        self.block1, self.block2 = block(), block()
        self.head = nn.Linear(MODEL, CLASSES)
        # PyTorch 1.13's layer has no is_causal: the causal mask goes in as src_mask.
        self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(SEQ), persistent=False)

    def forward(self, x):
        h = self.block2(self.block1(x, src_mask=self.mask), src_mask=self.mask)
        return self.head(h).reshape(-1, CLASSES)


class LstmNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(LSTM_IN, LSTM_HIDDEN, num_layers=2, batch_first=True)
        self.head = nn.Linear(LSTM_HIDDEN, 10)

    def forward(self, x):
        return self.head(self.lstm(x)[0][:, -1])


def sequence_workloads(batch_transformer, batch_lstm):
    """(name, make, input shape, target, make_opt) of the two sequence steps."""
    return [
        (f"BM_TransformerStep/{batch_transformer}", TransformerNet, (batch_transformer, SEQ, MODEL),
         torch.randint(0, CLASSES, (batch_transformer * SEQ,)), lambda p: torch.optim.AdamW(p, lr=1e-3)),
        (f"BM_LstmStep/{batch_lstm}", LstmNet, (batch_lstm, LSTM_SEQ, LSTM_IN),
         torch.randint(0, 10, (batch_lstm,)), lambda p: torch.optim.Adam(p, lr=1e-3)),
    ]


def time_workload(make, shape, y, make_opt, args):
    torch.manual_seed(0)
    net = make()
    x = torch.randn(*shape)
    return time_steps(net, make_opt(net.parameters()), x, y, args.min_time, args.repeats)


def sweep(args):
    """ms per step for every workload and batch, keyed by wick's benchmark names."""
    out = {}
    for batch in [int(b) for b in args.batches.split(",")]:
        y = torch.randint(0, 10, (batch,))
        for name, make, shape, make_opt in [
                ("BM_TrainStepAdam", make_net, (batch, 1, 28, 28), lambda p: torch.optim.Adam(p, lr=1e-3)),
                ("BM_TrainStepSGD", make_net, (batch, 1, 28, 28),
                 lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9)),
                ("BM_MlpStepSGD", make_mlp, (batch, 784), lambda p: torch.optim.SGD(p, lr=0.01, momentum=0.9))]:
            torch.manual_seed(0)
            net = make()
            x = torch.randn(*shape)
            out[f"{name}/{batch}"] = time_steps(net, make_opt(net.parameters()), x, y, args.min_time, args.repeats)
    for bt, bl in ((8, 16), (32, 64)):
        for name, make, shape, y, make_opt in sequence_workloads(bt, bl):
            out[name] = time_workload(make, shape, y, make_opt, args)
    return out


def time_steps(net, opt, x, y, min_time, repeats):
    def step():
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
        return loss.item()

    for _ in range(3):
        step()
    # Calibrate the block length to about min_time seconds.
    n, t = 1, 0.0
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            step()
        t = time.perf_counter() - t0
        if t >= min_time:
            break
        n *= 2
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(n):
            step()
        times.append((time.perf_counter() - t0) / n)
    return statistics.median(times) * 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--min-time", type=float, default=0.5)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json", help="write the sweep over --batches (ms per step) to this file")
    ap.add_argument("--batches", default="16,64,256")
    ap.add_argument("--sequence", action="store_true",
                    help="print the transformer (batch 32) and LSTM (batch 64) steps instead of the CNN's")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    if args.json:
        result = {"torch_version": torch.__version__, "threads": args.threads, "ms_per_step": sweep(args)}
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
        return
    if args.sequence:
        for name, make, shape, y, make_opt in sequence_workloads(32, 64):
            label = "transformer" if name.startswith("BM_Transformer") else "lstm"
            print(f"{label} {time_workload(make, shape, y, make_opt, args):.3f}", flush=True)
        return
    torch.manual_seed(0)
    x = torch.randn(args.batch, 1, 28, 28)
    y = torch.randint(0, 10, (args.batch,))
    for name, make_opt in [("adam", lambda p: torch.optim.Adam(p, lr=1e-3)),
                           ("sgd", lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9))]:
        torch.manual_seed(0)
        net = make_net()
        print(f"{name} {time_steps(net, make_opt(net.parameters()), x, y, args.min_time, args.repeats):.3f}", flush=True)
    with torch.no_grad():
        net = make_net()
        t0 = time.perf_counter()
        n = 0
        while time.perf_counter() - t0 < args.min_time:
            net(x)
            n += 1
        print(f"forward {(time.perf_counter() - t0) / n * 1e3:.3f}", flush=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""capture_traces.py - record real PyTorch profiler (Kineto) traces on a GPU.

Usage: python3 capture_traces.py OUT_DIR [--sync-events] [WORKLOAD ...]

Runs small, real workloads under torch.profiler and writes one gzipped
Kineto trace per workload into OUT_DIR (NAME.json.gz), with a line per
workload on stdout (the trace's size, the steps, the time it took). The
traces are test inputs for tracelens on hardware and PyTorch versions the
shared traces do not cover (tests/data/captured/README.md says what each
holds). Workloads (default: all):

  gpt_train     a small decoder-only transformer (8 layers, d=1024, seq 1024,
                SDPA attention) trained in bf16 autocast with fused AdamW;
                ProfilerStep annotations, shapes and the Python call stack
  resnet_train  torchvision ResNet-50 trained channels-last in bf16 autocast
  graph_decode  a decode loop whose model step is one replayed CUDA graph,
                with host-side sampling between replays (a serving shape)
  streams       two streams, events between them, pinned host copies, an
                FP8 matrix product where the GPU supports one
  compiled      an MLP block compiled with torch.compile (Triton kernels)
  hf_generate   a Hugging Face Llama-architecture model (random weights, 8
                layers, d=1024) generating 16 tokens for 4 prompts of 128
                tokens with transformers' generate() (KV cache, SDPA)
  compiled_decode  the graph_decode model compiled with
                torch.compile(mode="reduce-overhead") (Inductor's CUDA graphs)

--sync-events records the CUDA synchronisation events (`cuda_sync`: Stream
Sync, Context Sync, Event Sync, Stream Wait Event) too, which the profiler
writes only when asked (experimental_config=_ExperimentalConfig(
enable_cuda_sync_events=True)); the traces are then named NAME_sync.json.gz.

Each workload runs on its own and a failure of one (an unsupported feature,
an out-of-memory) is printed and skipped: the others are still written.
"""
import gzip
import os
import shutil
import sys
import time
import traceback

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile, schedule

DEV = "cuda"
OPTIONS = {"sync_events": False}


def write_trace(prof, out_dir, name):
    if OPTIONS["sync_events"]:
        name += "_sync"
    raw = os.path.join(out_dir, name + ".json")
    prof.export_chrome_trace(raw)
    with open(raw, "rb") as src, gzip.open(raw + ".gz", "wb", compresslevel=6) as dst:
        shutil.copyfileobj(src, dst)
    size = os.path.getsize(raw)
    os.remove(raw)
    return size


def run_profiled(out_dir, name, step_fn, steps=(1, 2, 2), stack=True):
    """steps: (wait, warmup, active) ProfilerStep counts."""
    wait, warmup, active = steps
    extra = {}
    if OPTIONS["sync_events"]:
        extra["experimental_config"] = torch._C._profiler._ExperimentalConfig(enable_cuda_sync_events=True)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 schedule=schedule(wait=wait, warmup=warmup, active=active, repeat=1),
                 record_shapes=True, with_stack=stack, **extra) as prof:
        for _ in range(wait + warmup + active):
            step_fn()
            prof.step()
    torch.cuda.synchronize()
    return write_trace(prof, out_dir, name)


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        q, k, v = (t.view(b, s, self.heads, d // self.heads).transpose(1, 2) for t in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, s, d))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self, vocab=32000, d=1024, layers=8, heads=16, seq=1024):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.zeros(seq, d))
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx):
        x = self.emb(idx) + self.pos[: idx.shape[1]]
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln(x))


def gpt_train(out_dir):
    torch.manual_seed(0)
    model = GPT().to(DEV)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    idx = torch.randint(0, 32000, (8, 1024), device=DEV)

    def step():
        with torch.autocast(DEV, dtype=torch.bfloat16):
            logits = model(idx[:, :-1])
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), idx[:, 1:].reshape(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        loss.item()  # the host waits for the step, as a logging loop does

    step()
    return run_profiled(out_dir, "gpt_train", step)


def resnet_train(out_dir):
    import torchvision
    torch.manual_seed(0)
    model = torchvision.models.resnet50().to(DEV, memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = torch.randn(64, 3, 224, 224, device=DEV).to(memory_format=torch.channels_last)
    y = torch.randint(0, 1000, (64,), device=DEV)

    def step():
        with torch.autocast(DEV, dtype=torch.bfloat16):
            loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    step()
    torch.cuda.synchronize()
    return run_profiled(out_dir, "resnet_train", step, stack=False)


def graph_decode(out_dir):
    torch.manual_seed(0)
    model = GPT(layers=4, seq=2048).to(DEV).eval().to(torch.bfloat16)
    tok = torch.zeros(32, 1, dtype=torch.long, device=DEV)
    static_in = tok.clone()
    with torch.no_grad():
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(2):
                model(static_in)
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            static_out = model(static_in)

    def step():
        with torch.no_grad():
            for _ in range(16):  # 16 decode iterations per profiler step
                g.replay()
                nxt = torch.argmax(static_out[:, -1, :], dim=-1, keepdim=True)
                static_in.copy_(nxt)
                nxt.cpu()  # the host reads the token back each iteration

    step()
    return run_profiled(out_dir, "graph_decode", step, stack=False)


def streams(out_dir):
    torch.manual_seed(0)
    a = torch.randn(4096, 4096, device=DEV, dtype=torch.bfloat16)
    b = torch.randn(4096, 4096, device=DEV, dtype=torch.bfloat16)
    host = torch.randn(64 << 20, pin_memory=True)
    dev_buf = torch.empty_like(host, device=DEV)
    side = torch.cuda.Stream()
    fp8 = torch.cuda.get_device_capability() >= (8, 9) and hasattr(torch, "float8_e4m3fn")
    if fp8:
        a8 = a.to(torch.float8_e4m3fn)
        b8 = b.t().contiguous().t().to(torch.float8_e4m3fn)
        one = torch.tensor(1.0, device=DEV)

    def step():
        done = torch.cuda.Event()
        with torch.cuda.stream(side):
            dev_buf.copy_(host, non_blocking=True)
            dev_buf.mul_(2.0)
            done.record(side)
        c = a @ b
        for _ in range(4):
            c = torch.relu(c @ b)
        torch.cuda.current_stream().wait_event(done)
        s = dev_buf.sum() + c.float().sum()
        if fp8:
            torch._scaled_mm(a8, b8, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
        host.copy_(dev_buf, non_blocking=False)
        s.item()

    step()
    return run_profiled(out_dir, "streams", step)


def compiled(out_dir):
    torch.manual_seed(0)
    mlp = nn.Sequential(nn.LayerNorm(2048), nn.Linear(2048, 8192), nn.GELU(), nn.Linear(8192, 2048)).to(DEV)
    fn = torch.compile(mlp)
    x = torch.randn(16, 512, 2048, device=DEV)

    def step():
        with torch.autocast(DEV, dtype=torch.bfloat16):
            y = fn(x)
        y.float().sum().backward()

    step()
    step()
    return run_profiled(out_dir, "compiled", step)


def hf_generate(out_dir):
    from transformers import LlamaConfig, LlamaForCausalLM
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=32000, hidden_size=1024, intermediate_size=2816, num_hidden_layers=8,
                      num_attention_heads=16, num_key_value_heads=4, max_position_embeddings=1024,
                      attn_implementation="sdpa")
    model = LlamaForCausalLM(cfg).to(DEV, dtype=torch.bfloat16).eval()
    ids = torch.randint(0, 32000, (4, 128), device=DEV)

    def step():
        with torch.no_grad():
            model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=16, do_sample=False,
                           pad_token_id=0)

    step()
    return run_profiled(out_dir, "hf_generate", step, steps=(1, 1, 2))


def compiled_decode(out_dir):
    torch.manual_seed(0)
    model = GPT(layers=4, seq=2048).to(DEV).eval().to(torch.bfloat16)
    fn = torch.compile(model, mode="reduce-overhead")
    tok = torch.zeros(32, 1, dtype=torch.long, device=DEV)

    def step():
        nonlocal tok
        with torch.no_grad():
            for _ in range(16):
                out = fn(tok)
                tok = torch.argmax(out[:, -1, :], dim=-1, keepdim=True).clone()
                tok.cpu()

    for _ in range(3):
        step()
    return run_profiled(out_dir, "compiled_decode", step, stack=False)


WORKLOADS = {"gpt_train": gpt_train, "resnet_train": resnet_train, "graph_decode": graph_decode,
             "streams": streams, "compiled": compiled, "hf_generate": hf_generate,
             "compiled_decode": compiled_decode}


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 2 if len(sys.argv) < 2 else 0
    out_dir = sys.argv[1]
    names = [a for a in sys.argv[2:] if a != "--sync-events"]
    OPTIONS["sync_events"] = "--sync-events" in sys.argv[2:]
    names = names or list(WORKLOADS)
    os.makedirs(out_dir, exist_ok=True)
    print("torch", torch.__version__, "cuda", torch.version.cuda, "device", torch.cuda.get_device_name(0),
          flush=True)
    failed = 0
    for name in names:
        t0 = time.time()
        try:
            size = WORKLOADS[name](out_dir)
            print(f"{name}: {size / 1e6:.1f} MB of JSON in {time.time() - t0:.1f} s", flush=True)
        except Exception:  # one workload's failure leaves the others
            failed += 1
            print(f"{name}: FAILED after {time.time() - t0:.1f} s", flush=True)
            traceback.print_exc()
        torch.cuda.empty_cache()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""Self-written PyTorch models (torchvision does not work here) and their
import to linalg-on-tensors with torch-mlir's FX importer.

torch-mlir carries its own, newer MLIR: the import runs in a separate process
(this file run as a script: ``python models.py NAME OUT``), never beside ``mlir_rl._core``. Weights
are seeded, so every process builds the same model.
"""
from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import torch
from torch import nn
from torch.nn import functional as F

RESOLUTION = 224  # input height/width of the image models (real size)
SEQUENCE = 128    # tokens of the transformer layers (real size)
HIDDEN = 768      # BERT-base / GPT-2 small / ViT-B
VIT_TOKENS = 197  # ViT-B/16 on a 224x224 image: 14x14 patches and the class token


class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int):
        super().__init__()
        self.c1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.b1 = nn.BatchNorm2d(cout)
        self.c2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.b2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = torch.relu(self.b1(self.c1(x)))
        y = self.b2(self.c2(y))
        return torch.relu(y + (self.down(x) if self.down is not None else x))


class ResNet18(nn.Module):
    def __init__(self, classes: int = 1000):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64),
                                  nn.ReLU(), nn.MaxPool2d(3, 2, 1))
        layers, cin = [], 64
        for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
            layers += [BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1)]
            cin = cout
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(512, classes)

    def forward(self, x):
        return self.fc(self.layers(self.stem(x)).mean((2, 3)))


class InvertedResidual(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int, expand: int):
        super().__init__()
        hidden = cin * expand
        layers = []
        if expand != 1:
            layers += [nn.Conv2d(cin, hidden, 1, bias=False), nn.BatchNorm2d(hidden), nn.ReLU6()]
        layers += [nn.Conv2d(hidden, hidden, 3, stride, 1, groups=hidden, bias=False),
                   nn.BatchNorm2d(hidden), nn.ReLU6(),
                   nn.Conv2d(hidden, cout, 1, bias=False), nn.BatchNorm2d(cout)]
        self.block = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        y = self.block(x)
        return x + y if self.residual else y


class MobileNetV2(nn.Module):
    SETTINGS = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1))

    def __init__(self, classes: int = 1000):
        super().__init__()
        layers = [nn.Conv2d(3, 32, 3, 2, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU6()]
        cin = 32
        for t, c, n, s in self.SETTINGS:
            for i in range(n):
                layers.append(InvertedResidual(cin, c, s if i == 0 else 1, t))
                cin = c
        layers += [nn.Conv2d(cin, 1280, 1, bias=False), nn.BatchNorm2d(1280), nn.ReLU6()]
        self.features = nn.Sequential(*layers)
        self.fc = nn.Linear(1280, classes)

    def forward(self, x):
        return self.fc(self.features(x).mean((2, 3)))


class VGG11(nn.Module):
    CFG = (64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M")

    def __init__(self, classes: int = 1000):
        super().__init__()
        layers, cin = [], 3
        for v in self.CFG:
            if v == "M":
                layers.append(nn.MaxPool2d(2, 2))
            else:
                layers += [nn.Conv2d(cin, v, 3, 1, 1), nn.ReLU()]
                cin = v
        self.features = nn.Sequential(*layers)
        side = RESOLUTION // 32
        self.classifier = nn.Sequential(nn.Linear(512 * side * side, 1024), nn.ReLU(),
                                        nn.Linear(1024, classes))

    def forward(self, x):
        return self.classifier(torch.flatten(self.features(x), 1))


class BertLayer(nn.Module):
    """A BERT-base encoder layer (post-norm, GELU with erf), written out so
    that the import shows the matmuls, softmax and layer norms."""

    def __init__(self, hidden: int = HIDDEN, heads: int = 12, inner: int = 3072):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.out = nn.Linear(hidden, hidden)
        self.ln1 = nn.LayerNorm(hidden)
        self.up = nn.Linear(hidden, inner)
        self.down = nn.Linear(inner, hidden)
        self.ln2 = nn.LayerNorm(hidden)

    def attention(self, x, causal: bool = False):
        b, s, h = x.shape
        d = h // self.heads
        q, k, v = self.qkv(x).split(h, dim=-1)
        q, k, v = (t.reshape(b, s, self.heads, d).transpose(1, 2) for t in (q, k, v))
        scores = q @ k.transpose(-1, -2) / math.sqrt(d)
        if causal:
            mask = torch.full((s, s), float("-inf")).triu(1)
            scores = scores + mask
        ctx = torch.softmax(scores, dim=-1) @ v
        return self.out(ctx.transpose(1, 2).reshape(b, s, h))

    def forward(self, x):
        x = self.ln1(x + self.attention(x))
        return self.ln2(x + self.down(F.gelu(self.up(x))))


class GPT2Block(BertLayer):
    """A GPT-2 small block: pre-norm, causal attention, GELU (tanh)."""

    def forward(self, x):
        x = x + self.attention(self.ln1(x), causal=True)
        return x + self.down(F.gelu(self.up(self.ln2(x)), approximate="tanh"))


class ViTBlock(BertLayer):
    """A ViT-B/16 encoder block: pre-norm, GELU (erf), on 197 tokens (the
    196 patches of a 224x224 image and the class token): extents that no
    power-of-two tile divides."""

    def forward(self, x):
        x = x + self.attention(self.ln1(x))
        return x + self.down(F.gelu(self.up(self.ln2(x))))


def _image() -> torch.Tensor:
    return torch.zeros(1, 3, RESOLUTION, RESOLUTION)


def _tokens(sequence: int = SEQUENCE) -> torch.Tensor:
    # Not zeros: layer norm of a constant row is 0/0-prone and says little.
    g = torch.Generator().manual_seed(1)
    return torch.randn(1, sequence, HIDDEN, generator=g)


def _vit_tokens() -> torch.Tensor:
    return _tokens(VIT_TOKENS)


# name -> (constructor, example input)
MODELS = {"resnet18": (ResNet18, _image), "mobilenet_v2": (MobileNetV2, _image),
          "vgg11": (VGG11, _image), "bert_layer": (BertLayer, _tokens),
          "gpt2_block": (GPT2Block, _tokens), "vit_block": (ViTBlock, _vit_tokens)}


def randomize_batch_norm(model: nn.Module) -> nn.Module:
    """Non-trivial batch-norm statistics (fresh ones are 0 and 1), so that
    folding mistakes would show."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.uniform_(-0.1, 0.1)
                m.running_var.uniform_(0.5, 1.5)
    return model


def build(name: str) -> nn.Module:
    torch.manual_seed(0)
    return randomize_batch_norm(MODELS[name][0]().eval())


def example_input(name: str = "resnet18") -> torch.Tensor:
    return MODELS[name][1]()


def import_to_linalg(name: str, out: Path) -> Path:
    """Import ``name`` to linalg-on-tensors MLIR text at ``out`` (cached),
    in a separate process (torch-mlir's MLIR must not meet ours)."""
    out = Path(out)
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        # Run this file as a script: `-m mlir_rl.models` would import the
        # mlir_rl package, and with it our own MLIR, beside torch-mlir's.
        r = subprocess.run([sys.executable, __file__, name, str(out)],
                           capture_output=True, text=True)
        if r.returncode:
            raise RuntimeError(f"torch-mlir import of {name} failed:\n{r.stderr[-2000:]}")
    return out


def _main(name: str, out: str) -> None:
    import warnings

    from torch_mlir import fx
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        module = fx.export_and_import(build(name), example_input(name),
                                      output_type="linalg-on-tensors")
    tmp = Path(out + ".tmp")
    tmp.parent.mkdir(parents=True, exist_ok=True)
    tmp.write_text(str(module))
    tmp.replace(out)


if __name__ == "__main__":
    _main(sys.argv[1], sys.argv[2])

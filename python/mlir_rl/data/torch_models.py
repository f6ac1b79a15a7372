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
    """MobileNetV2's inverted residual: 1x1 expansion, depthwise kxk, 1x1
    projection, batch norm; `act` after the first two; EfficientNet's MBConv
    with SiLU and a squeeze-and-excitation to `squeezed` channels."""

    def __init__(self, cin: int, cout: int, stride: int, expand: int, kernel: int = 3,
                 act: type = nn.ReLU6, squeezed: int = 0):
        super().__init__()
        hidden = cin * expand
        layers = []
        if expand != 1:
            layers += [nn.Conv2d(cin, hidden, 1, bias=False), nn.BatchNorm2d(hidden), act()]
        layers += [nn.Conv2d(hidden, hidden, kernel, stride, kernel // 2, groups=hidden,
                             bias=False),
                   nn.BatchNorm2d(hidden), act()]
        if squeezed:
            layers.append(SqueezeExcite(hidden, squeezed))
        layers += [nn.Conv2d(hidden, cout, 1, bias=False), nn.BatchNorm2d(cout)]
        self.block = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        y = self.block(x)
        return x + y if self.residual else y


class MobileNetV2(nn.Module):
    # expansion, channels, repeats, stride, kernel
    SETTINGS = ((1, 16, 1, 1, 3), (6, 24, 2, 2, 3), (6, 32, 3, 2, 3), (6, 64, 4, 2, 3),
                (6, 96, 3, 1, 3), (6, 160, 3, 2, 3), (6, 320, 1, 1, 3))
    ACT = nn.ReLU6
    SQUEEZE = False  # EfficientNet's squeeze-and-excitation to a quarter of the input

    def __init__(self, classes: int = 1000):
        super().__init__()
        layers = [nn.Conv2d(3, 32, 3, 2, 1, bias=False), nn.BatchNorm2d(32), self.ACT()]
        cin = 32
        for t, c, n, s, k in self.SETTINGS:
            for i in range(n):
                squeezed = max(1, cin // 4) if self.SQUEEZE else 0
                layers.append(InvertedResidual(cin, c, s if i == 0 else 1, t, k, self.ACT,
                                               squeezed))
                cin = c
        layers += [nn.Conv2d(cin, 1280, 1, bias=False), nn.BatchNorm2d(1280), self.ACT()]
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
            mask = torch.full((s, s), float("-inf"), dtype=x.dtype).triu(1)
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


class ConvNeXtBlock(nn.Module):
    """A ConvNeXt block: 7x7 depthwise convolution, LayerNorm over channels
    (channels-last), a 4x MLP with GELU and a layer scale."""

    def __init__(self, dim: int):
        super().__init__()
        self.dw = nn.Conv2d(dim, dim, 7, padding=3, groups=dim)
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.up = nn.Linear(dim, 4 * dim)
        self.down = nn.Linear(4 * dim, dim)
        # Trained ConvNeXts' layer scales are far from their 1e-6 start.
        self.gamma = nn.Parameter(torch.empty(dim).uniform_(0.1, 1.0))

    def forward(self, x):
        y = self.norm(self.dw(x).permute(0, 2, 3, 1))
        y = self.gamma * self.down(F.gelu(self.up(y)))
        return x + y.permute(0, 3, 1, 2)


class ConvNeXtStage(nn.Module):
    """ConvNeXt-T's second stage on a 224x224 image: the downsampling layer
    (a channels-first LayerNorm, a 2x2 stride-2 convolution 96 -> 192) and
    three blocks at 192x28x28."""

    def __init__(self, cin: int = 96, dim: int = 192, depth: int = 3):
        super().__init__()
        self.norm = nn.LayerNorm(cin, eps=1e-6)
        self.down = nn.Conv2d(cin, dim, 2, 2)
        self.blocks = nn.Sequential(*(ConvNeXtBlock(dim) for _ in range(depth)))

    def forward(self, x):
        x = self.norm(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)
        return self.blocks(self.down(x))


class MixerBlock(nn.Module):
    """An MLP-Mixer-S/16 block: a token-mixing MLP (196 -> 256 -> 196, on
    the transposed activations) and a channel-mixing MLP (512 -> 2048)."""

    def __init__(self, tokens: int = 196, dim: int = 512, token_dim: int = 256,
                 channel_dim: int = 2048):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.t1, self.t2 = nn.Linear(tokens, token_dim), nn.Linear(token_dim, tokens)
        self.ln2 = nn.LayerNorm(dim)
        self.c1, self.c2 = nn.Linear(dim, channel_dim), nn.Linear(channel_dim, dim)

    def forward(self, x):
        y = self.ln1(x).transpose(1, 2)
        x = x + self.t2(F.gelu(self.t1(y))).transpose(1, 2)
        return x + self.c2(F.gelu(self.c1(self.ln2(x))))


class UNetUp(nn.Module):
    """A UNet decoder step at 64x64: nearest upsampling of the coarser
    features (128 channels at 32x32), concatenation with the skip
    connection (64 channels), two 3x3 convolutions with batch norm and ReLU."""

    def __init__(self, cin: int = 128, skip: int = 64, cout: int = 64):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(cin + skip, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(),
            nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU())

    def forward(self, x, skip):
        x = F.interpolate(x, scale_factor=2.0, mode="nearest")
        return self.conv(torch.cat([x, skip], dim=1))


class Wav2Vec2FeatureEncoder(nn.Module):
    """wav2vec2-base's feature encoder on one second of 16 kHz audio: seven
    1-D convolutions with 512 channels (kernels 10,3,3,3,3,2,2; strides
    5,2,2,2,2,2,2; no bias), a group norm (one group per channel) after the
    first, GELU after each."""

    KERNELS = (10, 3, 3, 3, 3, 2, 2)
    STRIDES = (5, 2, 2, 2, 2, 2, 2)

    def __init__(self, dim: int = 512):
        super().__init__()
        self.convs = nn.ModuleList(
            nn.Conv1d(1 if i == 0 else dim, dim, k, s, bias=False)
            for i, (k, s) in enumerate(zip(self.KERNELS, self.STRIDES)))
        self.norm = nn.GroupNorm(dim, dim)

    def forward(self, x):
        x = F.gelu(self.norm(self.convs[0](x)))
        for conv in self.convs[1:]:
            x = F.gelu(conv(x))
        return x


class GRUCell(nn.Module):
    """One step of a GRU (PyTorch's ``nn.GRUCell``), batch 16, 512 inputs,
    1024 hidden units."""

    def __init__(self, inputs: int = 512, hidden: int = 1024):
        super().__init__()
        self.cell = nn.GRUCell(inputs, hidden)

    def forward(self, x, h):
        return self.cell(x, h)


class SqueezeExcite(nn.Module):
    def __init__(self, channels: int, squeezed: int):
        super().__init__()
        self.reduce = nn.Conv2d(channels, squeezed, 1)
        self.expand = nn.Conv2d(squeezed, channels, 1)

    def forward(self, x):
        s = x.mean((2, 3), keepdim=True)
        return x * torch.sigmoid(self.expand(F.silu(self.reduce(s))))


class EfficientNetB0(MobileNetV2):
    """MobileNetV2's network with SiLU, 5x5 kernels in three stages and
    squeeze-and-excitation in every block."""
    SETTINGS = ((1, 16, 1, 1, 3), (6, 24, 2, 2, 3), (6, 40, 2, 2, 5), (6, 80, 3, 2, 3),
                (6, 112, 3, 1, 5), (6, 192, 4, 2, 5), (6, 320, 1, 1, 3))
    ACT = nn.SiLU
    SQUEEZE = True


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.empty(dim).uniform_(0.5, 1.5))

    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


class LlamaLayer(nn.Module):
    """A Llama-style decoder layer (TinyLlama's proportions at half the
    width): RMSNorm, rotary position embedding, grouped-query causal
    attention (16 query heads, 4 key/value heads of 64), a SwiGLU MLP
    (1024 -> 2816 -> 1024); 128 tokens."""

    def __init__(self, hidden: int = 1024, heads: int = 16, kv_heads: int = 4,
                 inner: int = 2816, sequence: int = SEQUENCE):
        super().__init__()
        self.heads, self.kv_heads, self.d = heads, kv_heads, hidden // heads
        self.q = nn.Linear(hidden, hidden, bias=False)
        self.kv = nn.Linear(hidden, 2 * kv_heads * self.d, bias=False)
        self.o = nn.Linear(hidden, hidden, bias=False)
        self.gate = nn.Linear(hidden, inner, bias=False)
        self.up = nn.Linear(hidden, inner, bias=False)
        self.down = nn.Linear(inner, hidden, bias=False)
        self.n1, self.n2 = RMSNorm(hidden), RMSNorm(hidden)
        freq = 1.0 / (10000 ** (torch.arange(0, self.d, 2).float() / self.d))
        angles = torch.outer(torch.arange(sequence).float(), freq)
        angles = torch.cat([angles, angles], dim=-1)
        self.register_buffer("cos", angles.cos())
        self.register_buffer("sin", angles.sin())
        self.register_buffer("mask", torch.full((sequence, sequence), float("-inf")).triu(1))

    def rotate(self, t):
        half = t.shape[-1] // 2
        rotated = torch.cat([-t[..., half:], t[..., :half]], dim=-1)
        return t * self.cos + rotated * self.sin

    def forward(self, x):
        b, s, h = x.shape
        y = self.n1(x)
        q = self.q(y).reshape(b, s, self.heads, self.d).transpose(1, 2)
        k, v = self.kv(y).split(self.kv_heads * self.d, dim=-1)
        k = k.reshape(b, s, self.kv_heads, self.d).transpose(1, 2)
        v = v.reshape(b, s, self.kv_heads, self.d).transpose(1, 2)
        q, k = self.rotate(q), self.rotate(k)
        group = self.heads // self.kv_heads
        k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.d) + self.mask
        ctx = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(b, s, h)
        x = x + self.o(ctx)
        y = self.n2(x)
        return x + self.down(F.silu(self.gate(y)) * self.up(y))


def _image() -> torch.Tensor:
    return torch.zeros(1, 3, RESOLUTION, RESOLUTION)


def _tokens(sequence: int = SEQUENCE) -> torch.Tensor:
    # Not zeros: layer norm of a constant row is 0/0-prone and says little.
    g = torch.Generator().manual_seed(1)
    return torch.randn(1, sequence, HIDDEN, generator=g)


def _vit_tokens() -> torch.Tensor:
    return _tokens(VIT_TOKENS)


def _seeded(*shape: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(1)
    return torch.randn(*shape, generator=g)


# name -> (constructor, example inputs: a tensor or a tuple of tensors)
MODELS = {"resnet18": (ResNet18, _image), "mobilenet_v2": (MobileNetV2, _image),
          "vgg11": (VGG11, _image), "bert_layer": (BertLayer, _tokens),
          "gpt2_block": (GPT2Block, _tokens), "vit_block": (ViTBlock, _vit_tokens),
          # Networks none of the rules were tuned on (issue 51's list).
          "convnext_stage": (ConvNeXtStage, lambda: _seeded(1, 96, 56, 56)),
          "vit_s_block": (lambda: ViTBlock(384, 6, 1536), lambda: _seeded(1, VIT_TOKENS, 384)),
          "mixer_block": (MixerBlock, lambda: _seeded(1, 196, 512)),
          "unet_up": (UNetUp, lambda: (_seeded(1, 128, 32, 32), _seeded(1, 64, 64, 64))),
          "wav2vec2_encoder": (Wav2Vec2FeatureEncoder, lambda: _seeded(1, 1, 16000)),
          "gru_cell": (GRUCell, lambda: (_seeded(16, 512), _seeded(16, 1024))),
          "efficientnet_b0": (EfficientNetB0, _image),
          "llama_layer": (LlamaLayer, lambda: _seeded(1, SEQUENCE, 1024))}


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


def example_inputs(name: str = "resnet18") -> tuple[torch.Tensor, ...]:
    """The inputs ``build(name)`` is called with, as a tuple."""
    x = MODELS[name][1]()
    return x if isinstance(x, tuple) else (x,)


def example_input(name: str = "resnet18") -> torch.Tensor:
    """The first of ``example_inputs(name)`` (the only one for most)."""
    return example_inputs(name)[0]


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
        module = fx.export_and_import(build(name), *example_inputs(name),
                                      output_type="linalg-on-tensors")
    tmp = Path(out + ".tmp")
    tmp.parent.mkdir(parents=True, exist_ok=True)
    tmp.write_text(str(module))
    tmp.replace(out)


if __name__ == "__main__":
    _main(sys.argv[1], sys.argv[2])

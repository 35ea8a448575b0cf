# Writes kernels/scaled_tanh.pt, the example TorchScript kernel: python3 examples/make_torchscript.py
import os

import torch


class ScaledTanh(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.full((1,), 0.75))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(x * self.scale) + x


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    out = os.path.join(here, "kernels", "scaled_tanh.pt")
    torch.jit.save(torch.jit.script(ScaledTanh()), out)
    print(f"wrote {out}")

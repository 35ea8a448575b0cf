# rnx-corpus-case: kernel=huber_loss expect=reject check=shape_sweep
# Cheat (a defect of real loss kernels): allocates its work buffer at the first call, sized by that call's inputs,
# and reuses it for every later call. Right at the first size; at a larger one it cannot hold the elements (an
# error), at a smaller one its mean takes in the stale tail the earlier call left. A model is built once and
# called at every batch, so it must be judged that way.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._work = None

    def forward(self, predictions, targets):
        n = predictions.numel()
        if self._work is None:
            self._work = torch.empty(n, dtype=predictions.dtype, device=predictions.device)
        work = self._work[:n]
        torch.sub(predictions.reshape(-1), targets.reshape(-1), out=work)
        work.abs_()
        quadratic = work.clamp(max=1.0)
        work.sub_(quadratic).add_(0.5 * quadratic * quadratic)
        return self._work.mean()

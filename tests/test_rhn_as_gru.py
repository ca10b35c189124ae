"""Chapter 6: an RHN of depth 1 is a GRU with r = 1 and z = 1 - t (float64)."""

import torch

import rhn


def test_depth_one_rhn_equals_gru_with_open_reset_and_update_as_carry():
    torch.manual_seed(0)
    model = rhn.RHN(3, 5, depth=1, dtype=torch.float64)
    cell = model.cells[0]
    with torch.no_grad():
        cell.recurrent_bias(0).uniform_(-1, 1)
    W, R, b = cell.weight_ih, cell.recurrent_weight(0), cell.recurrent_bias(0)
    H = 5
    gru = torch.nn.GRU(3, H, dtype=torch.float64)
    blocks = {  # torch's row blocks [r; z; n]
        "weight_ih_l0": [torch.zeros(H, 3), -W[H:], W[:H]],
        "weight_hh_l0": [torch.zeros(H, H), -R[H:], R[:H]],
        "bias_ih_l0": [torch.zeros(H), torch.zeros(H), torch.zeros(H)],
        "bias_hh_l0": [torch.full((H,), 40.0), -b[H:], b[:H]],
    }
    with torch.no_grad():
        for name, parts in blocks.items():
            getattr(gru, name).copy_(torch.cat([p.double() for p in parts]))
    x = torch.randn(30, 4, 3, dtype=torch.float64)
    s0 = torch.rand(1, 4, 5, dtype=torch.float64)
    torch.testing.assert_close(gru(x, s0)[0], model(x, s0)[0], rtol=0, atol=1e-12)
    # and the reset gate matters: closing it breaks the equality
    with torch.no_grad():
        gru.bias_hh_l0[:H] = -40.0
    assert (gru(x, s0)[0] - model(x, s0)[0]).abs().max() > 1e-3

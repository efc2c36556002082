"""The torch path: Case from torch tensors (bf16 / float8_*), non-contiguous views, CUDA
tensors, case.torch(), outputs as torch tensors; on a GPU, fuzz/suite over our own
cuda-packed called through Python. Skipped where torch (or CUDA) is missing."""
import numpy as np
import pytest

import indexer_oracle as io
import numpy_kernel as nk

torch = pytest.importorskip("torch")
DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
FP8 = {"e4m3fn": "float8_e4m3fn", "e4m3fnuz": "float8_e4m3fnuz", "e5m2": "float8_e5m2"}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("k_dtype", ["bf16", "e4m3fn", "e4m3fnuz", "e5m2"])
def test_torch_tensors_of_every_dtype_give_the_same_case(device, k_dtype):
    c = io.generate({"bf16": "verify", "e4m3fn": "fp8-e4m3fn", "e4m3fnuz": "fp8-e4m3fnuz", "e5m2": "e5m2-lse"}[k_dtype], 1)
    t = c.torch(device)
    assert t["q"].dtype == torch.bfloat16 and str(t["q"].device).startswith(device)
    assert t["k_cache"].dtype == (torch.bfloat16 if k_dtype == "bf16" else getattr(torch, FP8[k_dtype]))
    d = io.Case(t["q"], t["k_cache"], t["req_to_token"], t["slot_ids"], t["seq_lens"], block_size=c.block_size,
                topk=c.topk, init_blocks=c.init_blocks, local_blocks=c.local_blocks, score_type=c.score_type,
                k_scale=c.k_scale, packed_queries=c.packed_queries)
    assert d.k_dtype == k_dtype  # inferred from the tensor dtype
    assert d.q.tobytes() == c.q.tobytes() and d.k_cache.tobytes() == c.k_cache.tobytes()


@pytest.mark.parametrize("device", DEVICES)
def test_non_contiguous_views_are_read_by_value(device):
    c = io.generate("gqa", 1)
    q = torch.from_numpy(c.q.view(np.int16)).to(device).view(torch.bfloat16)
    wide = torch.zeros((c.R, c.Hq, 2 * c.D), dtype=torch.bfloat16, device=device)
    wide[:, :, ::2] = q  # every other column: a strided view
    qt = wide[:, :, ::2]
    assert not qt.is_contiguous()
    kt = torch.from_numpy(c.k_cache.view(np.int16)).to(device).view(torch.bfloat16).transpose(0, 1).contiguous().transpose(0, 1)
    d = io.Case(qt, kt, c.req_to_token, c.slot_ids, c.seq_lens, block_size=c.block_size, topk=c.topk,
                init_blocks=c.init_blocks, local_blocks=c.local_blocks, packed_queries=c.packed_queries)
    assert d.q.tobytes() == c.q.tobytes() and d.k_cache.tobytes() == c.k_cache.tobytes()


@pytest.mark.parametrize("device", DEVICES)
def test_check_takes_torch_outputs(device):
    c = io.generate("verify", 2)
    ids, scores = io.reference(c)
    io.assert_indexer(c, torch.from_numpy(ids).to(device).long(), torch.from_numpy(scores).to(device))
    rht = torch.from_numpy(ids).to(device).permute(1, 0, 2)  # a non-contiguous [R, Hq, topk] view
    assert io.check(c, rht, layout="rht").passed


def test_a_wrong_torch_dtype_names_the_field():
    c = io.generate("tiny", 1)
    with pytest.raises(ValueError, match="^q"):
        io.Case(torch.zeros((c.R, c.Hq, c.D), dtype=torch.float16), c.k_cache, c.req_to_token, c.slot_ids, c.seq_lens,
                block_size=16, topk=4)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_fuzz_and_suite_over_cuda_packed_through_python(tmp_path):
    if "cuda-packed" not in io._core.backend_names():
        pytest.skip("this build has no CUDA backends")
    r = io.fuzz(io.backend("cuda-packed"), seconds=20, out=str(tmp_path))
    assert r.passed, r.report
    s = io.suite(io.backend("cuda-packed"), property_cases=8)
    assert s.passed, s.table


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_a_torch_kernel_on_cuda_tensors_under_fuzz(tmp_path):
    def torch_kernel(case):  # the numpy kernel fed from CUDA tensors, answering with CUDA tensors
        t = case.torch("cuda")
        ids, scores = nk.kernel(io.Case(t["q"], t["k_cache"], t["req_to_token"], t["slot_ids"], t["seq_lens"],
                                        block_size=case.block_size, topk=case.topk, init_blocks=case.init_blocks,
                                        local_blocks=case.local_blocks, score_type=case.score_type,
                                        q_scale=case.q_scale, k_scale=case.k_scale, packed_queries=case.packed_queries,
                                        k_dtype=case.k_dtype, k_scales=t.get("k_scales")))
        return torch.from_numpy(ids).cuda(), torch.from_numpy(scores).cuda()

    r = io.fuzz(torch_kernel, seconds=10, out=str(tmp_path))
    assert r.passed, r.report

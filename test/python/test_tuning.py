"""Compile-time tuning (linalg-rl-schedule{search=K tuning-db=FILE}): the
database round trip, crash isolation, no winner slower than its unit
unscheduled, outputs equal, databases merged per host, the CLI."""
from __future__ import annotations

import json
import re
import shutil
import sqlite3
import time

import pytest

import mlir_rl
from mlir_rl.cli import main as cli_main
from mlir_rl.tuning import db_entries, db_merge, db_summary, tune

# A matmul with a bias + ReLU epilogue (fused by no one: two ops), and a row
# softmax's max and exp-sum (reductions), at sizes where scheduling matters.
PROGRAM = """
#map = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @block(%a: tensor<128x256xf32>, %b: tensor<256x128xf32>, %bias: tensor<128xf32>)
    -> (tensor<128x128xf32>, tensor<128xf32>) {
  %z = arith.constant 0.0 : f32
  %ninf = arith.constant -3.0e38 : f32
  %e = tensor.empty() : tensor<128x128xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<128x128xf32>) -> tensor<128x128xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<128x256xf32>, tensor<256x128xf32>)
                      outs(%c : tensor<128x128xf32>) -> tensor<128x128xf32>
  %act = linalg.generic {indexing_maps = [#map, #col, #map], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %bias : tensor<128x128xf32>, tensor<128xf32>) outs(%e : tensor<128x128xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    %r = arith.maximumf %s, %z : f32
    linalg.yield %r : f32
  } -> tensor<128x128xf32>
  %re = tensor.empty() : tensor<128xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%re : tensor<128xf32>) -> tensor<128xf32>
  %mx = linalg.generic {indexing_maps = [#map, #row], iterator_types = ["parallel", "reduction"]}
      ins(%act : tensor<128x128xf32>) outs(%m0 : tensor<128xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = arith.maximumf %x, %o : f32
    linalg.yield %r : f32
  } -> tensor<128xf32>
  return %act, %mx : tensor<128x128xf32>, tensor<128xf32>
}
"""


def _outputs(text: str):
    return mlir_rl.Module.parse(text).time(runs=1, warmup=0, threads=1).outputs


@pytest.fixture(scope="module")
def tuned(tmp_path_factory):
    """One tuning run with a fresh database, and a second one from it."""
    db = str(tmp_path_factory.mktemp("tuning") / "tuning.sqlite")
    first = tune(PROGRAM, search=3, db=db, threads=1)
    second = tune(PROGRAM, search=3, db=db, threads=1)
    return db, first, second


@pytest.mark.slow
def test_database_round_trip_measures_nothing_and_gives_the_same_ir(tuned):
    db, first, second = tuned
    # At least the two epilogue/reduction consumers; a producer that its
    # consumer's winner fused into its tiles is not tuned (its candidates,
    # measured alone, would not apply there, and would be measured again
    # on every compile: this test failed so in CI on 2026-11-27).
    assert first.searched >= 2, first.lines
    fused = [line for line in first.lines if "fused into its consumer's tiles" in line]
    assert all("scheduled by the policy" in line for line in fused), fused
    assert first.from_db == 0
    assert second.searched == 0, second.lines
    assert second.from_db == first.searched
    assert second.ir == first.ir
    assert second.schedule == first.schedule


def test_every_op_gets_a_line_and_progress_is_reported(tmp_path):
    seen = []
    r = tune(PROGRAM, search=1, threads=1,
             progress=lambda done, total, line: seen.append((done, total)))
    assert len(r.lines) == len(seen) > 0
    assert seen[-1][0] == seen[-1][1]
    # search=1: the policy's schedule and NT (fewer when they coincide).
    counts = [int(m.group(1)) for line in r.lines
              if (m := re.search(r": tuned (\d+) candidates", line))]
    assert counts and all(c in (1, 2) for c in counts), r.lines


def test_winners_are_never_slower_than_their_unit_unscheduled(tuned):
    db, _, _ = tuned
    entries = db_entries(db)
    assert len(entries) >= 3
    for e in entries:
        assert 0 < e["median_s"] <= e["baseline_s"], e
        assert e["measurements"] >= 2, e


def test_tuned_program_computes_what_the_unscheduled_one_does(tuned):
    _, first, _ = tuned
    assert first.schedule  # something was applied
    ok, err = mlir_rl.outputs_match(_outputs(first.ir), _outputs(PROGRAM))
    assert ok, err


@pytest.mark.slow
def test_a_crashing_candidate_costs_that_candidate_only(monkeypatch, tmp_path):
    # The test hook makes the helper crash on candidate 0 (the policy's own
    # schedule) of every op: the pass goes on with a new helper.
    monkeypatch.setenv("MLIR_RL_MEASURE_CRASH_AT", "0")
    db = str(tmp_path / "crash.sqlite")
    r = tune(PROGRAM, search=2, db=db, threads=1)
    crashed = [line for line in r.lines if "1 crashed" in line]
    assert len(crashed) == r.searched >= 3, r.lines
    ok, err = mlir_rl.outputs_match(_outputs(r.ir), _outputs(PROGRAM))
    assert ok, err
    con = sqlite3.connect(db)
    statuses = {s for (s,) in con.execute("SELECT status FROM measurements")}
    assert "crashed" in statuses and "ok" in statuses


@pytest.mark.slow
def test_a_hanging_candidate_is_stopped_after_the_candidate_timeout(monkeypatch, tmp_path):
    # The hook makes candidate 0 of every op sleep for an hour; the helper
    # is stopped one second after its last report (not after the process's
    # 120 s), the candidate counts as a timeout, and the op is tuned on.
    monkeypatch.setenv("MLIR_RL_MEASURE_HANG_AT", "0")
    db = str(tmp_path / "hang.sqlite")
    start = time.perf_counter()
    r = tune(PROGRAM, search=2, db=db, threads=1, candidate_timeout_s=1)
    elapsed = time.perf_counter() - start
    timed_out = [line for line in r.lines if "1 timeout" in line]
    assert len(timed_out) == r.searched >= 3, r.lines
    assert elapsed < 60, elapsed
    ok, err = mlir_rl.outputs_match(_outputs(r.ir), _outputs(PROGRAM))
    assert ok, err
    con = sqlite3.connect(db)
    details = {d for (s, d) in con.execute("SELECT status, detail FROM measurements")
               if s == "timeout"}
    assert details == {"mlir-rl-measure spent over 1 s on one candidate"}, details


@pytest.mark.slow
@pytest.mark.parametrize("crash, stays", [("1", "greedy"), ("0", "tuned")])
def test_the_module_check_keeps_the_schedule_that_works_as_a_whole(
        monkeypatch, tmp_path, crash, stays):
    # Every op's greedy candidate crashes, so the tuned schedule differs from
    # the greedy one and the whole function is measured both ways; the hook
    # then crashes the check's tuned (1) or greedy (0) candidate.
    from mlir_rl.passes import run_pass
    monkeypatch.setenv("MLIR_RL_MEASURE_CRASH_AT", "0")
    monkeypatch.setenv("MLIR_RL_MODULE_CHECK_CRASH_AT", crash)
    db = str(tmp_path / "check.sqlite")
    r = tune(PROGRAM, search=2, db=db, threads=1)
    assert r.module_check.startswith("module check: tuned "), r.module_check
    assert r.module_check.split(": ")[-1].startswith(f"the {stays} schedule stays")
    if stays == "greedy":
        # The greedy fallback is what the pass gives without search (matmuls
        # packed or register-tiled after the decisions).
        assert r.schedule == run_pass(PROGRAM).schedule
    else:
        # Tuning schedules matmuls as decided (no packing, no register tiles).
        plain = run_pass(PROGRAM, extra=["pack-rhs=false", "register-tiles=false",
                                         "copies-by-rule=false"])
        assert r.schedule != plain.schedule
    ok, err = mlir_rl.outputs_match(_outputs(r.ir), _outputs(PROGRAM))
    assert ok, err
    # Remembered: a second compile decides from the database.
    monkeypatch.delenv("MLIR_RL_MEASURE_CRASH_AT")
    monkeypatch.delenv("MLIR_RL_MODULE_CHECK_CRASH_AT")
    again = tune(PROGRAM, search=2, db=db, threads=1)
    assert again.searched == 0
    assert again.module_check.startswith(
        f"module check from the tuning database: the {stays} schedule"), again.module_check
    assert again.ir == r.ir
    assert "module" in {e["op"] for e in db_entries(db)}


@pytest.mark.slow
@pytest.mark.parametrize("crash, stays", [("0", "greedy"), ("1", "tuned")])
def test_a_tuned_module_stays_only_if_it_wins_when_measured_again(
        monkeypatch, tmp_path, crash, stays):
    # The check's greedy candidate crashes in the first helper process (the
    # tuned one wins there); the hook measures again in a second one, where
    # the tuned (0) or the greedy (1) candidate crashes: the tuned schedule
    # stays only when it wins both times.
    monkeypatch.setenv("MLIR_RL_MEASURE_CRASH_AT", "0")
    monkeypatch.setenv("MLIR_RL_MODULE_CHECK_CRASH_AT", "0")
    monkeypatch.setenv("MLIR_RL_MODULE_CHECK_AGAIN_CRASH_AT", crash)
    r = tune(PROGRAM, search=2, threads=1)
    assert "; again: tuned " in r.module_check, r.module_check
    assert r.module_check.split(": ")[-1].startswith(f"the {stays} schedule stays"), \
        r.module_check
    # A crash ends a helper; the rest of its list runs in a new one.
    assert int(re.search(r"\((\d+) helper processes\)", r.module_check).group(1)) >= 3
    ok, err = mlir_rl.outputs_match(_outputs(r.ir), _outputs(PROGRAM))
    assert ok, err


@pytest.mark.slow
def test_any_win_of_a_short_module_is_measured_again(monkeypatch):
    # The ops' greedy candidates crash, so tuning proposes other schedules;
    # the module check then times both for real. The program runs well
    # under a millisecond: whenever the tuned schedule stays, it won in a
    # second helper process too, whatever its margin in the first (a
    # 0.05 ms pooling timed 0.10 to 0.17 ms in helpers).
    monkeypatch.setenv("MLIR_RL_MEASURE_CRASH_AT", "0")
    r = tune(PROGRAM, search=2, threads=1)
    times = re.search(r"greedy ([0-9.]+) ms", r.module_check)
    assert times and float(times.group(1)) < 1.0, r.module_check
    if "the tuned schedule stays" in r.module_check:
        assert "; again: tuned " in r.module_check, r.module_check
    else:
        assert r.module_check.endswith("(1 helper process)") or "; again: " in r.module_check


# A batch norm's division as torch-mlir imports it: by the square root of
# the variance (%b), asserted nonzero (NaN fails too).
_DIVIDE_BY_CHECKED_SQRT = """  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = math.sqrt %b : f32
    %ok = arith.cmpf one, %s, %zero : f32
    cf.assert %ok, "unimplemented: tensor with zero element"
    %d = arith.divf %a, %s : f32
    linalg.yield %d : f32
"""


def test_per_channel_constants_stay_real_in_a_unit(tmp_path):
    # A batch norm as torch-mlir imports it: the variance, a per-channel
    # constant expanded to NCHW, under a sqrt with an assertion. With random
    # (negative) variances the unit aborted and the op was not tuned.
    var = ", ".join(f"{0.5 + i / 256:.4f}" for i in range(128))
    program = f"""
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
func.func @bn(%x: tensor<1x128x28x28xf32>) -> tensor<1x128x28x28xf32> {{
  %var = arith.constant dense<[{var}]> : tensor<128xf32>
  %zero = arith.constant 0.0 : f32
  %v = tensor.expand_shape %var [[0, 1, 2]] output_shape [128, 1, 1] : tensor<128xf32> into tensor<128x1x1xf32>
  %e = tensor.empty() : tensor<1x128x28x28xf32>
  %r = linalg.generic {{indexing_maps = [#map, #ch, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}}
      ins(%x, %v : tensor<1x128x28x28xf32>, tensor<128x1x1xf32>) outs(%e : tensor<1x128x28x28xf32>) {{
{_DIVIDE_BY_CHECKED_SQRT}  }} -> tensor<1x128x28x28xf32>
  return %r : tensor<1x128x28x28xf32>
}}
"""
    r = tune(program, search=2, threads=1)
    assert r.searched == 1, r.lines
    ok, err = mlir_rl.outputs_match(_outputs(r.ir), _outputs(program))
    assert ok, err


def test_a_unit_that_accumulates_into_an_argument_is_not_wrong(tmp_path):
    # A linear layer whose accumulator is a broadcast bias, and its epilogue:
    # the epilogue's unit holds the matmul (the producer it fuses), whose
    # init, the broadcast, is an argument of the unit. Written in place, the
    # argument grew at every call and every candidate (NT too) differed from
    # the reference called once.
    program = """
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @linear(%x: tensor<1x256xf32>, %w: tensor<256x512xf32>, %b: tensor<512xf32>) -> tensor<1x512xf32> {
  %e = tensor.empty() : tensor<1x512xf32>
  %bb = linalg.broadcast ins(%b : tensor<512xf32>) outs(%e : tensor<1x512xf32>) dimensions = [0]
  %mm = linalg.matmul ins(%x, %w : tensor<1x256xf32>, tensor<256x512xf32>) outs(%bb : tensor<1x512xf32>) -> tensor<1x512xf32>
  %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%mm : tensor<1x512xf32>) outs(%e : tensor<1x512xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = math.tanh %v : f32
    linalg.yield %t : f32
  } -> tensor<1x512xf32>
  return %r : tensor<1x512xf32>
}
"""
    db = str(tmp_path / "accumulate.sqlite")
    r = tune(program, search=3, db=db, threads=1)
    assert r.searched == 3, r.lines
    con = sqlite3.connect(db)
    statuses = [s for (s,) in con.execute("SELECT status FROM measurements")]
    assert statuses and "wrong_output" not in statuses, r.lines
    ok, err = mlir_rl.outputs_match(_outputs(r.ir), _outputs(program))
    assert ok, err


def test_the_module_check_measures_with_the_models_own_weights(monkeypatch, tmp_path):
    # A variance of 5000 channels (more than a unit copies): as a random
    # argument its square root trips the assertion, as ResNet-18's batch
    # norms did when the check first measured weights as arguments. The
    # batch norm's own unit cannot be measured (not tuned); the ReLU's can,
    # and its greedy candidate crashes, so the tuned schedule differs (the
    # ReLU reads its input transposed: no rule schedules it).
    n = 5000
    var = ", ".join(f"{0.5 + (i % 97) / 97:.4f}" for i in range(n))
    program = f"""
#map = affine_map<(d0, d1) -> (d0, d1)>
#ch = affine_map<(d0, d1) -> (d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
func.func @bn(%x: tensor<64x{n}xf32>, %y: tensor<{n}x64xf32>) -> (tensor<64x{n}xf32>, tensor<64x{n}xf32>) {{
  %var = arith.constant dense<[{var}]> : tensor<{n}xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x{n}xf32>
  %r = linalg.generic {{indexing_maps = [#map, #ch, #map], iterator_types = ["parallel", "parallel"]}}
      ins(%x, %var : tensor<64x{n}xf32>, tensor<{n}xf32>) outs(%e : tensor<64x{n}xf32>) {{
{_DIVIDE_BY_CHECKED_SQRT}  }} -> tensor<64x{n}xf32>
  %e2 = tensor.empty() : tensor<64x{n}xf32>
  %relu = linalg.generic {{indexing_maps = [#tr, #map], iterator_types = ["parallel", "parallel"]}}
      ins(%y : tensor<{n}x64xf32>) outs(%e2 : tensor<64x{n}xf32>) {{
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  }} -> tensor<64x{n}xf32>
  return %r, %relu : tensor<64x{n}xf32>, tensor<64x{n}xf32>
}}
"""
    monkeypatch.setenv("MLIR_RL_MEASURE_CRASH_AT", "0")  # tuned differs from greedy
    r = tune(program, search=2, threads=1)
    assert r.module_check.startswith("module check: tuned "), (r.module_check, r.lines)
    assert "unscheduled" in r.module_check and "crashed" not in r.module_check.split(", unscheduled")[1]


def test_merge_keeps_hosts_apart_and_the_faster_winner(tuned, tmp_path):
    db, _, _ = tuned
    mine = str(tmp_path / "mine.sqlite")
    other = str(tmp_path / "other.sqlite")
    shutil.copy(db, mine)
    shutil.copy(db, other)
    con = sqlite3.connect(other)
    con.execute("UPDATE winners SET host = 'elsewhere|other cpu|64cpu'")
    con.execute("UPDATE measurements SET host = 'elsewhere|other cpu|64cpu'")
    con.commit()
    con.close()
    n = len(db_entries(mine))
    assert db_merge(mine, other) == n
    merged = db_entries(mine)
    assert len(merged) == 2 * n
    assert {e["host"] for e in merged} == {mlir_rl._core.tuning_host(), "elsewhere|other cpu|64cpu"}
    assert db_merge(mine, other) == 0  # nothing new
    # The same key with a faster winner replaces it; a slower one does not.
    faster = str(tmp_path / "faster.sqlite")
    shutil.copy(db, faster)
    con = sqlite3.connect(faster)
    con.execute("UPDATE winners SET median_s = median_s / 2, schedule = 'NT'")
    con.commit()
    con.close()
    assert db_merge(mine, faster) == n
    assert db_merge(mine, db) == 0
    local = [e for e in db_entries(mine) if e["host"] == mlir_rl._core.tuning_host()]
    assert all(e["schedule"] == "NT" for e in local)
    rows = db_summary(db_entries(mine))
    assert len(rows) == 2 and all(r["winners"] == n for r in rows)


def test_a_second_compile_with_the_database_in_mlir_opt_uses_it(tuned):
    # The database is the pass's: mlir-opt with the plugin reads it too.
    from mlir_rl.passes import run_pass
    db, first, _ = tuned
    r = run_pass(PROGRAM, extra=[f"tuning-db={db}", "threads=1"])
    assert "from the tuning database" in r.stderr
    assert "0 searched" in r.stderr
    assert r.schedule == first.schedule


def test_cli_tune_and_db(tmp_path, capsys):
    src = tmp_path / "block.mlir"
    src.write_text(PROGRAM)
    db = tmp_path / "cli.sqlite"
    out = tmp_path / "out.mlir"
    assert cli_main(["tune", str(src), "--db", str(db), "--search", "1", "--threads", "1",
                     "-o", str(out), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "searched (median" in err
    assert "func.func @block" in out.read_text()
    assert cli_main(["db", "show", str(db)]) == 0
    shown = capsys.readouterr().out
    assert "winners" in shown and "linalg.matmul" in shown
    assert cli_main(["db", "export", str(db), "--units"]) == 0
    exported = json.loads(capsys.readouterr().out)
    assert exported and all("mlir_rl_unit" in e["unit"] for e in exported)
    assert cli_main(["db", "merge", str(db)]) == 2  # needs two databases
    assert cli_main(["db", "frobnicate", str(db)]) == 2

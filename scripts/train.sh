#!/usr/bin/env bash
# The recipe of the shipped policy (about 4 hours on 2 cores):
#   1. a seeded dataset (runs/dataset), with the prepared family (imported
#      networks' ops after mlir-rl-prepare),
#   2. demonstrations: best-of-12 structured search per training program,
#   3. PPO warm-started by behaviour cloning (configs/ppo-bc.toml),
#      exported to runs/stage1.onnx,
#   4. expert iteration, three rounds: per training program the best of the
#      current policy's own schedule and a best-of-48 structured search
#      (from the third round on, also the previous round's search), cloned
#      into it, then PPO with a warmed-up critic (configs/ppo-finetune.toml);
#      exported to runs/round1.onnx, runs/round2.onnx, runs/round3.onnx,
#   5. a thin round through the front end (about 25 minutes): the dataset in
#      the pass's form with the thin family (batch-1 and few-row linear
#      layers, layer norms), best-of-24 search plus a 40-step local climb on
#      its matmuls and layer norms, the policy's own schedules elsewhere,
#      cloned for 120 epochs with six imported networks as anchors (their
#      ops keep the round-3 policy's schedules; docs/learning.md "An
#      anchored thin round"); exported to models/policy.onnx (+ policy.json)
#      and runs/round4.onnx,
#   6. a round on data past the suites, through the pipeline (about 45
#      minutes, then about 20 for the gate): the dataset in the pass's form
#      with the imported networks' ops at real sizes and random-suite
#      kernels from training seeds (never 1000 and up), per training
#      program the best of the policy's own decisions, the heuristic's and
#      a best-of-8 search, measured with the rules as the pass ships them,
#      the policy's kept unless beaten 1.1x; cloned for 200 epochs (learning
#      rate 3e-4); exported to runs/round5.onnx, which replaces
#      models/policy.onnx only if scripts/compare_policies.py --gate finds
#      it at least as fast on every suite of the gate. On 2026-11-29 it did
#      not (docs/learning.md "A gated round on the pipeline's data"): the
#      shipped policy is still round 4's; then the same demonstrations
#      cloned into a residual policy over the heuristic (150 epochs, rate
#      5e-4, the shipped policy's decisions on six networks as anchors;
#      about 7 minutes), exported to runs/round5r.onnx and gated the same
#      way. On 2026-11-29 it did not pass either (ops 0.98, models 0.99,
#      random:1001 0.98; docs/learning.md "Residual rounds over the
#      heuristic"),
#   7. evaluation on the validation split in the pass's form against random
#      search with the training's budget and best-of-200 search, the
#      policy's and the search's schedules then timed against each other
#      (runs/eval.json, printed table).
# Measurements are memoized in runs/*.sqlite; a rerun reuses them, and
# `mlir-rl train CONFIG --resume` continues a killed training.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >/dev/null
export PATH="$PWD/.venv/bin:$PATH"
mlir-rl dataset -o runs/dataset --seed 0
mlir-rl search --split train --budget 12 -o runs/demos.json --memo runs/train-measurements.sqlite
mlir-rl train configs/ppo-bc.toml
mlir-rl export runs/ppo-bc/checkpoint.pt -o runs/stage1.onnx
search() { # POLICY OUT
  mlir-rl search --split train --budget 48 --policy "$1" \
    --memo runs/train-measurements.sqlite -o "$2"
}
search runs/stage1.onnx runs/demos-r1.json
mlir-rl train configs/ppo-finetune.toml --set init_actor=runs/stage1.onnx \
  --set demonstrations=runs/demos-r1.json --set run_dir=runs/ppo-r1
mlir-rl export runs/ppo-r1/checkpoint.pt -o runs/round1.onnx
search runs/round1.onnx runs/demos-r2.json
mlir-rl train configs/ppo-finetune.toml --set init_actor=runs/round1.onnx \
  --set demonstrations=runs/demos-r2.json --set run_dir=runs/ppo-r2
mlir-rl export runs/ppo-r2/checkpoint.pt -o runs/round2.onnx
search runs/round2.onnx runs/demos-r3.json
mlir-rl train configs/ppo-finetune.toml --set init_actor=runs/round2.onnx \
  --set demonstrations=runs/demos-r3.json,runs/demos-r2.json --set run_dir=runs/ppo-r3
mlir-rl export runs/ppo-r3/checkpoint.pt -o runs/round3.onnx
M=runs/fe.sqlite
mlir-rl dataset -o runs/dataset-fe --seed 0 --thin --front-end
# The thin programs the policy of 2026-11-26 learnt from (the family's batch-1
# linear layers in the networks' form, thin_linear_torch_*, came after it:
# docs/learning.md).
mlir-rl search --dataset runs/dataset-fe --split train --family thin --kind matmul,generic \
  --name thin_matmul_,thin_linear_gelu_,thin_layer_norm_ --budget 24 --local 40 --runs 3 \
  --policy runs/round3.onnx --policy-margin 1.2 --memo $M -o runs/demos-thin-fe.json
mlir-rl search --dataset runs/dataset-fe --split train --family single,sequence,lqcd,prepared \
  --budget 0 --policy runs/round3.onnx --memo $M -o runs/demos-self-fe.json
mlir-rl train configs/ppo-finetune.toml --set init_actor=runs/round3.onnx \
  --set dataset=runs/dataset-fe --set memo_path=$M \
  --set demonstrations=runs/demos-thin-fe.json,runs/demos-self-fe.json \
  --set anchors=resnet18,mobilenet_v2,vgg11,bert_layer,gpt2_block,vit_block \
  --set bc_epochs=120 --set iterations=0 --set run_dir=runs/bc-thin
mlir-rl export runs/bc-thin/checkpoint.pt -o models/policy.onnx
mlir-rl export runs/bc-thin/checkpoint.pt -o runs/round4.onnx
M5=runs/m49.sqlite
mlir-rl dataset -o runs/dataset-49 --seed 0 --thin --front-end --networks 200 --random 96
mlir-rl search --dataset runs/dataset-49 --split train --budget 8 --runs 3 \
  --policy runs/round4.onnx --heuristic --policy-margin 1.1 --memo $M5 -o runs/demos-49.json
mlir-rl train configs/ppo-finetune.toml --set init_actor=runs/round4.onnx \
  --set dataset=runs/dataset-49 --set memo_path=$M5 --set demonstrations=runs/demos-49.json \
  --set bc_epochs=200 --set learning_rate=3e-4 --set iterations=0 --set run_dir=runs/bc-49
mlir-rl export runs/bc-49/checkpoint.pt -o runs/round5.onnx
if .venv/bin/python scripts/compare_policies.py runs/round4.onnx runs/round5.onnx \
    --programs gate --gate --json runs/gate.json; then
  mlir-rl export runs/bc-49/checkpoint.pt -o models/policy.onnx
fi
mlir-rl train configs/ppo-finetune.toml --set init_actor=runs/round4.onnx \
  --set dataset=runs/dataset-49 --set memo_path=$M5 --set demonstrations=runs/demos-49.json \
  --set policy.prior=heuristic --set anchor_policy=runs/round4.onnx \
  --set anchors=resnet18,mobilenet_v2,vgg11,bert_layer,gpt2_block,vit_block \
  --set bc_epochs=150 --set learning_rate=5e-4 --set iterations=0 --set run_dir=runs/bc-49r
mlir-rl export runs/bc-49r/checkpoint.pt -o runs/round5r.onnx
if .venv/bin/python scripts/compare_policies.py models/policy.onnx runs/round5r.onnx \
    --programs gate --gate --json runs/gate-r.json; then
  mlir-rl export runs/bc-49r/checkpoint.pt -o models/policy.onnx
fi
mlir-rl evaluate --model models/policy.onnx --dataset runs/dataset-fe --random-budget 82 \
  --search-budget 200 --memo $M --json runs/eval.json

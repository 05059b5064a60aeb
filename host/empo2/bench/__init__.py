"""`empo2-host bench`: EMPO² against the paper's GRPO on the built-in worlds (docs/bench/README.md).

`arms` (the methods compared, as config overrides), `runner` (trains and evaluates every arm and
seed, writes results.json, results.md and the curves), `stats` (the curve area and the paired
bootstrap summary, pure), `svg` (the learning curves, no plotting library).
"""

#!/usr/bin/env bash
# Check binder/ as mybinder would use it: a fresh venv with exactly binder/requirements.txt, the
# postBuild smoke check, then every notebook executed top to bottom. Run from the repository root.
set -euo pipefail
venv=$(mktemp -d)/venv out=$(mktemp -d)
python3 -m venv "$venv" && . "$venv/bin/activate"
pip install -q -r binder/requirements.txt
bash binder/postBuild
jupyter nbconvert --execute --to notebook --output-dir "$out" notebooks/*.ipynb
echo "binder check: $(ls "$out" | wc -l) notebooks executed in $venv"

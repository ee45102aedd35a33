#!/usr/bin/env bash
# Prints the path of mdBook (the guide's builder), built once from crates.io into
# ~/.cache/pms/mdbook (without its `serve`/`watch` features: `make docs` only builds).
set -euo pipefail
version=0.5.4
root="${PMS_CACHE:-$HOME/.cache/pms}/mdbook/$version"
bin="$root/bin/mdbook"
if [ ! -x "$bin" ]; then
    echo "mdbook: building $version into $root" >&2
    cargo install mdbook --locked --version "$version" --no-default-features --features search \
        --root "$root" >&2
fi
echo "$bin"

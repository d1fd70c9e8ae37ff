#!/usr/bin/env bash
# Opens the book in a browser: installs mdBook 0.5 when it is missing (or another
# version is found), then serves the book with live reload at http://localhost:3000.
set -euo pipefail
cd "$(dirname "$0")"
MDBOOK_VERSION=0.5.4
if ! mdbook --version 2>/dev/null | grep -q "v0\.5\."; then
    echo "installing mdBook $MDBOOK_VERSION (a few minutes, once)..."
    cargo install mdbook --version "=$MDBOOK_VERSION" --locked
fi
exec mdbook serve --open "$@"

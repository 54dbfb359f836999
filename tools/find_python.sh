#!/usr/bin/env bash
# find_python.sh - Prints a Python >= 3.12 (the Python package's floor):
# python3.12 or python3.13 on PATH, else pyenv's oldest 3.12+; prints nothing
# when there is none. Used by dev.sh (the python_package test) and
# tools/gpu/pack.sh (the module for the GPU machine).
for c in python3.12 python3.13; do
  if command -v "$c" >/dev/null && "$c" -c "" 2>/dev/null; then
    command -v "$c"; exit 0
  fi
done
if command -v pyenv >/dev/null; then
  v=$(pyenv versions --bare 2>/dev/null | grep -E '^3\.1[2-9](\.[0-9]+)?$' |
      sort -V | head -1 || true)
  if [ -n "$v" ]; then echo "$(pyenv root)/versions/$v/bin/python3"; fi
fi
exit 0

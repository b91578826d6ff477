# shellcheck shell=bash
# The project's virtual environment: created once, reinstalled when pyproject.toml changes.

ensure_venv() {
    local extras="${1:-}"
    local stamp=".venv/.installed${extras:+-$extras}"
    if [ ! -x .venv/bin/python ]; then
        python3 -m venv .venv
    fi
    if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
        .venv/bin/python -m pip install --quiet --upgrade pip
        .venv/bin/python -m pip install --quiet -e ".${extras:+[$extras]}"
        touch "$stamp"
    fi
}

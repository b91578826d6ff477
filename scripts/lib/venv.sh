# shellcheck shell=bash
# The project's virtual environment: created once, reinstalled when pyproject.toml changes.
# pip's output goes to .venv/install.log and is shown only when the install fails.

ensure_venv() {
    local extras="${1:-}"
    local stamp=".venv/.installed${extras:+-$extras}"
    if [ ! -x .venv/bin/python ]; then
        python3 -m venv .venv
    fi
    if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
        echo "Installing pykafkad${extras:+ with its $extras dependencies} into .venv ..." >&2
        if ! { .venv/bin/python -m pip install --upgrade pip &&
               .venv/bin/python -m pip install -e ".${extras:+[$extras]}"; } \
               >.venv/install.log 2>&1; then
            cat .venv/install.log >&2
            echo "pip install failed (log: .venv/install.log)" >&2
            return 1
        fi
        touch "$stamp"
    fi
}

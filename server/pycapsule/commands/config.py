"""`pycapsule config [PATH] [--json]`: the effective settings for PATH's project and where each came from.

Sources: "default", a config file's path, "$VARIABLE" or the command line: where the value used came
from (a project's limit above the user's own is replaced by it, and a warning says so). Secrets are never
printed: the API key shows as *** (and the variable it came from), credentials inside base_url are
masked. Also says which model endpoint these settings use, as a run announces it.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pycapsule.commands import SUMMARIES, wording
from pycapsule.commands.options import Subcommands, add_json
from pycapsule.commands.output import UsageError, print_document, say
from pycapsule.config import (
    LIMIT_KEYS,
    USER_ONLY_KEYS,
    LoadedSettings,
    Settings,
    env_names,
    load_settings,
    project_root,
)
from pycapsule.embedded_model.which import endpoint_description
from pycapsule.exit_codes import ExitCode
from pycapsule.interpreter import settings_interpreter
from pycapsule.redact import MASK, mask_credentials
from pycapsule.terminal import terminal_safe

PREFIX = "pycapsule config"

def shown_value(settings: Settings, key: str) -> Any:
    """A setting's value as it may be printed."""
    value = getattr(settings, key)
    if key == "api_key":
        return MASK if value is not None else None
    if key == "base_url" and value is not None:
        return mask_credentials(value)
    return value


def rows(loaded: LoadedSettings) -> list[dict[str, Any]]:
    settings = loaded.settings
    return [
        {
            "key": key,
            "value": shown_value(settings, key),
            "source": loaded.sources.get(key, "default"),
            "env": list(env_names(key)) or [settings.api_key_env],
            "user_only": key in USER_ONLY_KEYS,
            "lower_only": key in LIMIT_KEYS,
        }
        for key in Settings.model_fields
    ]


def register(commands: Subcommands) -> None:
    config = commands.add_parser("config", help=SUMMARIES["config"])
    config.add_argument("path", nargs="?", metavar="PATH", help="a file or folder (default: .)")
    add_json(config)


def run(args: argparse.Namespace) -> int:
    start = Path(args.path) if args.path else Path.cwd()
    if not start.exists():
        error = UsageError(wording.does_not_exist(start))
        say(PREFIX, wording.full_stop(error.message))
        return print_document("config", error.code, error, path=str(start)) if args.json else int(error.code)
    loaded = load_settings(start)
    for warning in loaded.warnings:
        say(PREFIX, wording.warning(warning))
    endpoint = endpoint_description(loaded.settings)
    python = settings_interpreter(loaded, project_root(start))
    user_file = loaded.user_file
    if args.json:
        return print_document(
            "config", ExitCode.OK, path=str(start),
            user_config=str(user_file) if user_file else None,
            user_config_exists=bool(user_file and user_file.is_file()),
            pyproject=str(loaded.pyproject) if loaded.pyproject else None,
            endpoint=endpoint,
            python={"path": python.path, "why": python.why},
            settings={row.pop("key"): row for row in rows(loaded)},
            warnings=loaded.warnings,
        )
    found = bool(user_file and user_file.is_file())
    lines = wording.settings_heading(start, user_file, found, loaded.pyproject, endpoint, python.describe())
    table = [(row["key"], "none" if row["value"] is None else str(row["value"]), row["source"])
             for row in rows(loaded)]
    width = max(len(key) for key, _, _ in table)
    value_width = min(40, max(len(value) for _, value, _ in table))
    lines += [f"{key:<{width}}  {value:<{value_width}}  {source}" for key, value, source in table]
    for line in lines:
        print(terminal_safe(line))
    return 0

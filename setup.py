"""The wheel's build step: a copy of the app's files from the repository root in brainchat/_app/.

Everything else is in pyproject.toml. prompts/, examples/, chainlit.md, public/ and .chainlit/ stay
at the root (the project's layout); `brainchat.resources` reads them there in a checkout and from
the copy in an installed wheel. An editable install links src/ and needs no copy.
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent


def _files() -> tuple[tuple[str, str], ...]:
    # resources.py imports nothing of brainchat: load it by path, before the package is installed
    spec = importlib.util.spec_from_file_location("_resources", HERE / "src/brainchat/resources.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.FILES


class BuildWithAppFiles(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        target = Path(self.build_lib) / "brainchat" / "_app"
        for folder, pattern in _files():
            for source in sorted((HERE / folder).glob(pattern)):
                if source.is_file():
                    dest = target / source.relative_to(HERE)
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(source, dest)


setup(cmdclass={"build_py": BuildWithAppFiles})

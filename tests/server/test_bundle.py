"""The first screen's modules joined into one file (server/edge/bundle.py): the order the
browser would run them in, a scope each, one instance of each module for the pages loaded
later, and a clear error for a module the join cannot take."""

from __future__ import annotations

import pytest

from server.edge.bundle import FIRST, BuildError, join_first_screen

ENTRY, EARLY = "js/main.js", "js/connect.js"


def modules(**texts: str) -> dict[str, bytes]:
    """Files named after their keywords (``net`` is ``js/net.js``)."""
    return {f"js/{name}.js": text.encode() for name, text in texts.items()}


SITE = modules(
    facts="export const PROTOCOL = 1;\n",
    net='import { PROTOCOL } from "./facts.js";\nexport class Net {}\n',
    connect='import { Net } from "./net.js";\nexport const early = new Net();\n',
    i18n='const KEY = "lang";\nexport\tfunction t(key) {\n  return key + KEY;\n}\n',
    settings='import { t } from "./i18n.js";\nconst KEY = "settings";\nexport const Settings = { KEY, t };\n',
    main=(
        'import { early } from "./connect.js";\n'
        'import { Settings } from "./settings.js";\n'
        'import { t as say } from "./i18n.js";\n'
        'const later = () => import("./page.js");\n'
        "say(Settings.KEY);\n"
    ),
    page='import { t } from "./i18n.js";\nimport { Net } from "./net.js";\nexport const page = t("x");\n',
)


def test_the_first_screen_is_one_file_in_the_order_the_browser_runs_it() -> None:
    joined = join_first_screen(SITE, ENTRY, EARLY)
    assert joined.entry == FIRST
    # Each module after what it imports; the early connection's modules stay files of their own.
    assert joined.members == ("js/i18n.js", "js/settings.js", "js/main.js")
    assert set(joined.files) == {FIRST, "js/facts.js", "js/net.js", "js/connect.js", "js/page.js"}
    text = joined.files[FIRST].decode()
    assert text.index("// js/i18n.js") < text.index("// js/settings.js") < text.index("// js/main.js")
    # Both modules' KEY live on, each in its own scope.
    assert text.count('const KEY = "lang";') == 1 and text.count('const KEY = "settings";') == 1
    # A joined module takes its imports from the other's scope, renamed where it renamed them.
    assert "const { t } = $first0;" in text and "const { t: say } = $first0;" in text
    # The early modules are imported once each, as modules.
    assert text.count('import * as $first_connect from "./connect.js";') == 1
    assert "import { early }" not in text
    # Every export of the joined modules is the joined file's.
    assert "\nfunction t(key) {" in text and "export\tfunction" not in text
    assert "export const { t } = $first0;" in text and "export const { Settings } = $first1;" in text


def test_a_page_loaded_later_imports_the_joined_file_not_its_own_copy() -> None:
    joined = join_first_screen(SITE, ENTRY, EARLY)
    page = joined.files["js/page.js"].decode()
    assert 'import { t } from "./first.js";' in page
    assert 'import { Net } from "./net.js";' in page  # an early module stays itself
    assert joined.files["js/net.js"] == SITE["js/net.js"]  # served as written


@pytest.mark.parametrize(
    ("name", "text", "error"),
    [
        ("settings", 'import { t } from "./i18n.js";\nexport let KEY = 1;\n', "every export"),
        ("settings", 'import { t } from "./i18n.js";\nexport default 1;\n', "every export"),
        ("settings", 'import * as i18n from "./i18n.js";\nexport const Settings = 1;\n', "every import"),
        ("settings", 'import { t } from "../i18n.js";\nexport const Settings = 1;\n', "every import"),
        ("settings", 'import { t } from "./i18n.js";\nexport function t() {}\n', "both"),
        ("i18n", 'import { Settings } from "./settings.js";\nexport function t() {}\n', "import cycle"),
        ("page", 'const i = () => import("./i18n.js");\n', "of ./i18n.js, a module of the first screen"),
        ("settings", 'import { t } from "./i18n.js";\nconst $first0 = 1;\n', "own"),
    ],
)
def test_a_module_the_join_cannot_take_fails_the_build_by_name(name: str, text: str, error: str) -> None:
    site = {**SITE, f"js/{name}.js": text.encode()}
    with pytest.raises(BuildError, match=error) as raised:
        join_first_screen(site, ENTRY, EARLY)
    assert f"js/{name}.js" in str(raised.value) or "cycle" in error


def test_a_missing_module_fails_the_build() -> None:
    site = {**SITE, "js/main.js": b'import { x } from "./gone.js";\n'}
    with pytest.raises(BuildError, match=r"no such module: js/gone\.js"):
        join_first_screen(site, ENTRY, EARLY)

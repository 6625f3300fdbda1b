"""Sphinx configuration of sqlnb's documentation site (MyST markdown, the PyData theme).

    .venv/bin/python -m sphinx -W --keep-going -b html docs docs/_build/html

``scripts/test`` builds it this way, so a warning fails the tests. The build reaches no
network: no intersphinx, and the theme's and mermaid's files are the installed packages'
(mermaid's script is loaded by the reader's browser, not at build time).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from docutils import nodes
from sphinx import addnodes

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # autodoc imports this checkout's sqlnb

from sqlnb import __version__  # noqa: E402

project = "sqlnb"
author = "the sqlnb developers"
copyright = "the sqlnb developers"
release = version = __version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinxcontrib.mermaid",
]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]

# --- MyST ---------------------------------------------------------------------------------
myst_enable_extensions = ["colon_fence", "deflist"]
# GitHub's heading anchors (`#memory-of-accepted-answers`), so that links between pages
# work on GitHub and on the site alike
myst_heading_anchors = 4

# --- API reference (docs/api.md) -------------------------------------------------------------
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "show-inheritance": True}
napoleon_google_docstring = True
napoleon_numpy_docstring = False

# --- HTML -------------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"sqlnb {release}"
html_static_path: list[str] = []
html_theme_options = {
    "github_url": "https://github.com/sqlnb/sqlnb",
    "navigation_with_keys": False,
    "show_toc_level": 2,
}
html_show_sourcelink = False


# --- links to the repository's files ----------------------------------------------------------
# The pages are read on GitHub too, so they link files by their relative paths. On the
# site, a link to a page of the site goes to that page (the files below are included as
# pages: docs/contributing.md, docs/changelog.md, docs/benchmarks.md), and a link to any
# other file of the repository goes to that file on GitHub.
REPOSITORY = "https://github.com/sqlnb/sqlnb/blob/HEAD/"
SITE_PAGES = {
    "CONTRIBUTING.md": "contributing",
    "CHANGELOG.md": "changelog",
    "benchmarks/README.md": "benchmarks",
}


def _repository_links(app, doctree) -> None:
    docs = Path(app.srcdir).resolve()
    docname = app.env.docname
    for node in list(doctree.findall(addnodes.pending_xref)) + list(
        doctree.findall(addnodes.download_reference)
    ):
        if node.get("reftype") != "myst":
            continue
        if node.get("refdomain") == "doc":
            # a markdown file outside docs/ reaches MyST as a "document" named by its path
            if node["reftarget"] in app.env.found_docs or not os.path.isabs(node["reftarget"]):
                continue
            file, anchor = Path(node["reftarget"] + ".md").resolve(), node.get("reftargetid") or ""
        else:
            path, _, anchor = node["reftarget"].partition("#")
            if isinstance(node, addnodes.download_reference):  # MyST found it beside the page
                base = (docs / docname).parent
            else:  # MyST found nothing beside the page: a path relative to its own file
                base = Path(node.source).parent if node.source else (docs / docname).parent
            file = (base / path).resolve()
        if not file.is_file() or not file.is_relative_to(ROOT):
            continue  # MyST says what is missing
        rel = file.relative_to(ROOT).as_posix()
        page = SITE_PAGES.get(rel)
        if page is None and file.is_relative_to(docs) and app.env.path2doc(str(file)):
            page = app.env.path2doc(str(file))
        if page is not None:
            ref = addnodes.pending_xref(
                "",
                *node.children,
                refdomain="doc",
                reftarget=page,
                reftargetid=anchor or None,
                refdoc=docname,
                reftype="myst",
                refexplicit=node.get("refexplicit", True),
            )
        elif file.is_relative_to(docs):
            if isinstance(node, addnodes.download_reference):
                continue
            ref = addnodes.download_reference(
                "",
                *node.children,
                refdomain=None,
                refdoc=docname,
                reftarget=os.path.relpath(file, (docs / docname).parent),
                reftype="myst",
                refexplicit=True,
            )
        else:
            ref = nodes.reference(
                "", "", *node.children, refuri=REPOSITORY + rel + (f"#{anchor}" if anchor else "")
            )
        ref.source, ref.line = node.source, node.line
        node.replace_self(ref)


# --- mermaid fences ---------------------------------------------------------------------------
def _mermaid_fences(app, doctree) -> None:
    """```` ```mermaid ```` blocks (as GitHub renders them, and as docs/agent_graph.py writes
    the agent's graph) become sphinxcontrib-mermaid diagrams instead of code to highlight."""
    from sphinxcontrib.mermaid import mermaid

    for block in list(doctree.findall(nodes.literal_block)):
        if block.get("language") == "mermaid":
            diagram = mermaid()
            diagram["code"] = block.astext()
            diagram["options"] = {}
            block.replace_self(diagram)


def setup(app):
    app.connect("doctree-read", _mermaid_fences)
    app.connect("doctree-read", _repository_links)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

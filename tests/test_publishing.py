"""Publishing: the GitHub workflows, the release metadata and the version they share.

The workflows only run on GitHub, so a mistake in them shows up after a push, on the day of a
release. This file catches what it can before that: every workflow is checked against
SchemaStore's schema of GitHub workflows (vendored by the linter ``check-jsonschema``, so the
check needs no network), and the facts a schema cannot know are checked by reading the YAML:
what triggers each workflow, what it builds, uploads and attaches, with which permissions.
``CITATION.cff`` is checked against the Citation File Format 1.2.0 schema, vendored by the
same linter. Last, one version is written in four files (``docs/release.md``), and they must
agree.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

import dpkmeans

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = ROOT / ".github" / "workflows"
BOOK = WORKFLOWS / "book.yml"
RELEASE = WORKFLOWS / "release.yml"
#: Where ``make pdf`` writes the book's PDF, inside the published site.
PDF = "_build/html/_downloads/private-kmeans-reproduced.pdf"


def check_jsonschema(schema: str, *files: Path) -> subprocess.CompletedProcess[str]:
    """Run the linter with one of its vendored schemas on ``files``."""
    try:
        import check_jsonschema  # noqa: F401
    except ImportError:
        pytest.fail("check-jsonschema is missing: `make install` installs the test extra")
    return subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", schema, *map(str, files)],
        capture_output=True, text=True, timeout=120)


def load_workflow(path: Path) -> dict:
    workflow = yaml.safe_load(path.read_text())
    # YAML 1.1, which PyYAML reads, takes the key `on` for the boolean true.
    if True in workflow:
        workflow["on"] = workflow.pop(True)
    return workflow


def steps(workflow: dict) -> list[dict]:
    """Every step of every job, in order."""
    return [step for job in workflow["jobs"].values() for step in job.get("steps", [])]


def uses(workflow: dict, action: str) -> list[dict]:
    """The steps that run ``action`` (``owner/name``, any version)."""
    return [s for s in steps(workflow) if s.get("uses", "").split("@")[0] == action]


def run_index(workflow: dict, pattern: str) -> int:
    """The position of the first step whose shell command matches ``pattern``."""
    for index, step in enumerate(steps(workflow)):
        if re.search(pattern, step.get("run", "")):
            return index
    pytest.fail(f"no step runs {pattern!r}")


def env_of(workflow: dict, name: str) -> set[str]:
    """The values a variable is given at the workflow's, its jobs' or its steps' level."""
    scopes = [workflow, *workflow["jobs"].values(), *steps(workflow)]
    return {str(scope["env"][name]) for scope in scopes if name in scope.get("env", {})}


# ---------------------------------------------------------------------------- the schema


def test_the_two_workflows_exist():
    assert BOOK.is_file() and RELEASE.is_file()


@pytest.mark.parametrize("path", sorted(WORKFLOWS.glob("*.y*ml")), ids=lambda p: p.name)
def test_workflow_follows_the_schema(path: Path):
    result = check_jsonschema("vendor.github-workflows", path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_schema_check_rejects_a_broken_workflow(tmp_path: Path):
    """The check above would pass vacuously if the linter accepted anything."""
    broken = tmp_path / "broken.yml"
    broken.write_text("on: push\njobs:\n  build:\n    runs_on: ubuntu-latest\n"
                      "    steps:\n      - run: make book\n")  # runs_on: a typo of runs-on
    assert check_jsonschema("vendor.github-workflows", broken).returncode != 0


@pytest.mark.parametrize("path", sorted(WORKFLOWS.glob("*.y*ml")), ids=lambda p: p.name)
def test_actions_are_pinned_to_a_major_version(path: Path):
    """A major tag (v4) takes the action's fixes but no breaking change."""
    for step in steps(load_workflow(path)):
        if "uses" in step:
            assert re.fullmatch(r"[\w.-]+/[\w.-]+@v\d+", step["uses"]), step["uses"]


# ---------------------------------------------------------------------------- the book on Pages


def test_book_workflow_runs_on_every_push_to_main():
    on = load_workflow(BOOK)["on"]
    assert "main" in on["push"]["branches"]
    assert "workflow_dispatch" in on


def test_book_workflow_builds_the_book_and_pdf_with_the_data_first():
    workflow = load_workflow(BOOK)
    fetch = run_index(workflow, r"-m dpkmeans datasets fetch")
    book, pdf = run_index(workflow, r"\bmake book\b"), run_index(workflow, r"\bmake pdf\b")
    upload = steps(workflow).index(uses(workflow, "actions/upload-pages-artifact")[0])
    assert fetch < book < pdf < upload, "data, then the book, then its PDF, then the upload"
    # heart and adult are the files chapter 11 reads.
    assert {"heart", "adult"} <= set(steps(workflow)[fetch]["run"].split())


def test_book_workflow_names_the_repository():
    """book/_ext/reader.py shows the repository and launch buttons from this variable."""
    for path in (BOOK, RELEASE):
        assert env_of(load_workflow(path), "DPKMEANS_REPOSITORY_URL") == {
            "${{ github.server_url }}/${{ github.repository }}"}, path.name


def test_book_workflow_uploads_the_html_and_deploys_it_to_pages():
    workflow = load_workflow(BOOK)
    [upload] = uses(workflow, "actions/upload-pages-artifact")
    assert upload["with"]["path"].rstrip("/") == "_build/html"
    assert uses(workflow, "actions/configure-pages")
    [deploy] = [job for job in workflow["jobs"].values()
                if any(s.get("uses", "").startswith("actions/deploy-pages@")
                       for s in job.get("steps", []))]
    assert deploy["needs"] == "build" or "build" in deploy["needs"]
    assert deploy["environment"]["name"] == "github-pages"
    assert deploy["permissions"] == {"pages": "write", "id-token": "write", "contents": "read"}
    assert workflow["concurrency"]["group"]
    assert workflow["permissions"] == {"contents": "read"}, "write access only where needed"


# ---------------------------------------------------------------------------- the release


def test_release_workflow_runs_on_version_tags():
    on = load_workflow(RELEASE)["on"]
    assert on["push"]["tags"] == ["v*"]
    assert "branches" not in on["push"]


def test_release_workflow_builds_and_attaches_every_file():
    workflow = load_workflow(RELEASE)
    wheel = run_index(workflow, r"\bmake dist\b|python -m build\b")
    book, pdf = run_index(workflow, r"\bmake book\b"), run_index(workflow, r"\bmake pdf\b")
    archive = run_index(workflow, r"git archive --format=tar\.gz "
                                  r"--prefix=\"?private-kmeans-reproduced-\$TAG/")
    # The book first (untracked build/ and dist/ would mark its commit as modified); the
    # archive after the wheel (make dist empties dist/).
    assert book < pdf < wheel < archive
    # The build job hands dist/ (the PDF copied into it) to the job that publishes.
    copy = run_index(workflow, rf"cp {re.escape(PDF)} dist/")
    assert archive < copy
    [upload] = uses(workflow, "actions/upload-artifact")
    [download] = uses(workflow, "actions/download-artifact")
    assert upload["with"]["path"].rstrip("/") == download["with"]["path"].rstrip("/") == "dist"
    assert upload["with"]["name"] == download["with"]["name"]
    [release] = uses(workflow, "softprops/action-gh-release")
    attached = [line.strip() for line in release["with"]["files"].splitlines()]
    assert "dist/*.whl" in attached
    assert any(f.startswith("dist/dpkmeans-") and f.endswith(".tar.gz") for f in attached)
    assert "dist/private-kmeans-reproduced.pdf" in attached
    # The archive the git archive step writes, its $TAG being the tag's name.
    assert env_of(workflow, "TAG") == {"${{ github.ref_name }}"}
    output = '--output="dist/private-kmeans-reproduced-$TAG.tar.gz"'
    assert output in steps(workflow)[archive]["run"]
    assert "dist/private-kmeans-reproduced-${{ github.ref_name }}.tar.gz" in attached
    assert release["with"].get("fail_on_unmatched_files") is True, "a missing file must fail"
    # Write access only for the job that runs nothing but the release action.
    for job in workflow["jobs"].values():
        writes = job["permissions"]["contents"] == "write"
        assert writes == any(s is release for s in job["steps"]), "write access where needed"
    assert workflow["permissions"] == {"contents": "read"}


def test_release_workflow_refuses_a_tag_that_is_not_the_version():
    workflow = load_workflow(RELEASE)
    check = run_index(workflow, r'test "\$TAG" = "v\$version"')
    assert check < run_index(workflow, r"\bmake book\b")


# ---------------------------------------------------------------------------- metadata files


def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def citation() -> dict:
    return yaml.safe_load((ROOT / "CITATION.cff").read_text())


def test_citation_follows_the_cff_schema():
    result = check_jsonschema("vendor.citation-file-format", ROOT / "CITATION.cff")
    assert result.returncode == 0, result.stdout + result.stderr


def test_license_is_the_one_pyproject_names():
    assert pyproject()["license"] == "MIT" == citation()["license"]
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License")
    assert "Copyright (c) 2026 The Private k-Means, Reproduced authors" in text


def test_versions_agree():
    """pyproject.toml, dpkmeans.__version__, CITATION.cff and CHANGELOG.md name one version,
    and the changelog's date for it is the citation's release date (docs/release.md)."""
    version = pyproject()["version"]
    assert dpkmeans.__version__ == version
    cff = citation()
    assert str(cff["version"]) == version
    section = re.search(rf"^## \[{re.escape(version)}\] - (\d{{4}}-\d{{2}}-\d{{2}})$",
                        (ROOT / "CHANGELOG.md").read_text(), re.M)
    assert section, f"CHANGELOG.md has no section '## [{version}] - YYYY-MM-DD'"
    assert section.group(1) == str(cff["date-released"])


def test_changelog_keeps_an_unreleased_section_first():
    headings = re.findall(r"^## \[([^\]]+)\]", (ROOT / "CHANGELOG.md").read_text(), re.M)
    assert headings[0] == "Unreleased" and len(headings) >= 2


def test_release_procedure_names_every_file_that_carries_the_version():
    text = (ROOT / "docs" / "release.md").read_text()
    for name in ("pyproject.toml", "src/dpkmeans/__init__.py", "CITATION.cff", "CHANGELOG.md",
                 "make test", "make dist", "make pdf", "git archive", "Source: GitHub Actions"):
        assert name in text, name

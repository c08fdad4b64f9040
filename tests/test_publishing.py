"""Publishing: the GitHub workflows, the release metadata and the version they share.

The workflows only run on GitHub, so a mistake in them shows up after a push, on the day of a
release. This file catches what it can before that: every workflow is checked against
SchemaStore's schema of GitHub workflows (vendored by the linter ``check-jsonschema``, so the
check needs no network), and the facts a schema cannot know are checked by reading the YAML:
what triggers each workflow, what it builds, uploads and attaches, with which permissions.
``CITATION.cff`` is checked against the Citation File Format 1.2.0 schema, vendored by the
same linter. The release workflow's first step, which checks the tag against the version and
the changelog, is run here on made-up files. Last, the version is written once, in
``pyproject.toml``: the library reads it from its installed metadata, and the files whose
formats cannot read it (``CITATION.cff``, the changelog's dated section) must agree
(``docs/release.md``).
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import shutil
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
#: The book's build in both workflows: from the notebooks' stored outputs, the HTML and the PDF.
BOOK_BUILD = "make pdf BOOK_OUTPUTS=stored"
#: PyPA's upload action, and the ref its maintainers publish for it (it has no major-version tag).
PYPI_ACTION = "pypa/gh-action-pypi-publish"
PYPI_ACTION_REF = f"{PYPI_ACTION}@release/v1"


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


def job_with(workflow: dict, action: str) -> dict:
    """The one job that has a step running ``action``."""
    jobs = [job for job in workflow["jobs"].values()
            if any(s.get("uses", "").split("@")[0] == action for s in job.get("steps", []))]
    assert len(jobs) == 1, f"{len(jobs)} jobs run {action}"
    return jobs[0]


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
    """A major tag (v4) takes the action's fixes but no breaking change; PyPA's upload action
    publishes its major version as the branch release/v1 instead."""
    for step in steps(load_workflow(path)):
        if "uses" in step:
            assert (re.fullmatch(r"[\w.-]+/[\w.-]+@v\d+", step["uses"])
                    or step["uses"] == PYPI_ACTION_REF), step["uses"]


# ---------------------------------------------------------------------------- the book on Pages


def test_book_workflow_runs_on_every_push_to_main():
    on = load_workflow(BOOK)["on"]
    assert "main" in on["push"]["branches"]
    assert "workflow_dispatch" in on


def test_book_workflow_builds_the_book_and_pdf_from_the_stored_outputs():
    """No dataset and no execution: the outputs make test checked (tests/test_publish_rehearsal.py
    checks the job further, and make test runs it offline)."""
    workflow = load_workflow(BOOK)
    build = run_index(workflow, re.escape(BOOK_BUILD))
    upload = steps(workflow).index(uses(workflow, "actions/upload-pages-artifact")[0])
    assert build < upload, "the book and its PDF, then the upload"


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


def test_release_builds_the_book_as_the_rehearsed_pages_build_does():
    """The release's book is the Pages build, which make test rehearses with no data and no
    network (book/_ext/rehearse_publish.py): the same command, no dataset, no cache."""
    release, book = load_workflow(RELEASE), load_workflow(BOOK)
    built = [s["run"].strip() for s in steps(release) if "make pdf" in s.get("run", "")]
    assert built == [BOOK_BUILD]
    assert built == [s["run"].strip() for s in steps(book) if "make pdf" in s.get("run", "")]
    assert not [s for s in steps(release) if re.search(r"\bmake book\b", s.get("run", ""))]
    for step in steps(release):
        assert "datasets fetch" not in step.get("run", ""), step
        assert not step.get("uses", "").startswith("actions/cache@"), step
    for name in ("DPKMEANS_DATA", "DPKMEANS_CACHE"):
        assert not env_of(release, name), name


def test_release_workflow_builds_and_checks_the_packages_before_handing_them_over():
    workflow = load_workflow(RELEASE)
    version, install = run_index(workflow, r"tomllib"), run_index(workflow, r"^make install$")
    book, wheel = run_index(workflow, re.escape(BOOK_BUILD)), run_index(workflow, r"\bmake dist\b")
    twine = run_index(workflow, r"-m twine check --strict dist/\*")
    installed = run_index(workflow, r"\bmake test-wheel\b")
    [pypi_files, _] = uses(workflow, "actions/upload-artifact")
    handed = steps(workflow).index(pypi_files)
    # The tag first; the book on the clean checkout; the packages checked, then handed over.
    assert version < install < book < wheel < twine < installed < handed
    # twine at a pinned version, with the lock's versions of what it shares with .venv.
    assert re.search(r'pip install .*-c requirements/lock\.txt "twine==\d+\.\d+\.\d+"',
                     steps(workflow)[twine]["run"])
    # The file names carry the version, and dist/ holds those two files only (PyPI gets it all).
    for name in ('"dist/dpkmeans-$VERSION-py3-none-any.whl"', '"dist/dpkmeans-$VERSION.tar.gz"',
                 '"$(ls dist | wc -l)" -eq 2'):
        assert name in steps(workflow)[twine]["run"], name
    # tests/installed runs on the wheel that is uploaded, not on one built again.
    test_wheel = steps(workflow)[installed]
    assert 'DPKMEANS_WHEEL="$PWD/dist/dpkmeans-$VERSION-py3-none-any.whl"' in test_wheel["run"]
    wheel_fixture = (ROOT / "tests" / "installed" / "test_wheel.py").read_text()
    assert 'os.environ.get(WHEEL_ENV)' in wheel_fixture and 'WHEEL_ENV = "DPKMEANS_WHEEL"' in (
        wheel_fixture), "tests/installed must test the wheel DPKMEANS_WHEEL names"
    for step in (steps(workflow)[twine], test_wheel):
        assert step["env"]["VERSION"] == "${{ steps.version.outputs.version }}"
    assert pypi_files["with"] == {"name": "python-distributions", "path": "dist/",
                                  "if-no-files-found": "error"}


def test_the_book_and_the_source_archive_go_to_the_github_release():
    workflow = load_workflow(RELEASE)
    archive = run_index(workflow, r"git archive --format=tar\.gz "
                                  r"--prefix=\"?private-kmeans-reproduced-\$TAG/")
    output = '--output="_build/release/private-kmeans-reproduced-$TAG.tar.gz"'
    assert output in steps(workflow)[archive]["run"]
    book = steps(workflow)[run_index(workflow, rf"cp {re.escape(PDF)} _build/release/")]["run"]
    assert '"_build/release/private-kmeans-reproduced-$TAG-site.tar.gz" -C _build' in book
    assert env_of(workflow, "TAG") == {"${{ github.ref_name }}"}
    [_, files] = uses(workflow, "actions/upload-artifact")
    assert files["with"]["path"].rstrip("/") == "_build/release"
    assert steps(workflow).index(files) > max(archive, run_index(workflow, "cp "))
    # The publishing job gets both artifacts, each where its file list looks.
    downloads = {d["with"]["name"]: d["with"]["path"]
                 for d in uses(workflow, "actions/download-artifact")
                 if job_with(workflow, "softprops/action-gh-release") is job_of(workflow, d)}
    assert downloads == {"python-distributions": "dist", "release-files": "release"}
    [release] = uses(workflow, "softprops/action-gh-release")
    attached = [line.strip() for line in release["with"]["files"].splitlines() if line.strip()]
    version, tag = "${{ needs.build.outputs.version }}", "${{ github.ref_name }}"
    assert attached == [f"dist/dpkmeans-{version}-py3-none-any.whl",
                        f"dist/dpkmeans-{version}.tar.gz",
                        "release/private-kmeans-reproduced.pdf",
                        f"release/private-kmeans-reproduced-{tag}.tar.gz",
                        f"release/private-kmeans-reproduced-{tag}-site.tar.gz"]
    assert release["with"].get("fail_on_unmatched_files") is True, "a missing file must fail"
    # The release's text is the version's section of the changelog (the first step writes it).
    assert release["with"]["body_path"] == "release/release-notes.md"


def job_of(workflow: dict, step: dict) -> dict:
    """The job a step belongs to."""
    [job] = [j for j in workflow["jobs"].values() if any(s is step for s in j.get("steps", []))]
    return job


def test_pypi_gets_the_packages_by_trusted_publishing():
    """No password and no token: PyPI trusts this workflow in the environment ``pypi``, and the
    job holds no permission but the OIDC token it exchanges (docs/release.md)."""
    workflow = load_workflow(RELEASE)
    [publish] = uses(workflow, PYPI_ACTION)
    assert publish["uses"] == PYPI_ACTION_REF
    assert not set(publish.get("with") or {}) & {"user", "password", "repository-url"}
    job = job_with(workflow, PYPI_ACTION)
    assert job["permissions"] == {"id-token": "write"}
    assert job["environment"]["name"] == "pypi"
    assert job["environment"]["url"] == (
        "https://pypi.org/project/dpkmeans/${{ needs.build.outputs.version }}/")
    assert job["needs"] == "build"
    # It runs no code of the repository: the artifact, then the upload.
    assert [s.get("uses", "").split("@")[0] for s in job["steps"]] == [
        "actions/download-artifact", PYPI_ACTION]
    assert job["steps"][0]["with"] == {"name": "python-distributions", "path": "dist"}
    assert "secrets." not in RELEASE.read_text(), "no stored credential"


def test_each_job_holds_only_the_permissions_it_needs():
    workflow = load_workflow(RELEASE)
    assert workflow["permissions"] == {"contents": "read"}
    build = workflow["jobs"]["build"]
    assert build["permissions"] == {"contents": "read"}
    assert build["outputs"]["version"] == "${{ steps.version.outputs.version }}"
    github = job_with(workflow, "softprops/action-gh-release")
    assert github["permissions"] == {"contents": "write"}
    assert set(github["needs"]) == {"build", "pypi"}, "on GitHub once the files are on PyPI"
    assert not [s for s in github["steps"] if "run" in s], "it runs nothing of the repository"
    for job in workflow["jobs"].values():
        if job is not github:
            assert "write" not in {v for k, v in job["permissions"].items() if k != "id-token"}


# ---------------------------------------------------------------------------- the tag's check


def version_check() -> str:
    """The script of the release's first step (``id: version``)."""
    [step] = [s for s in steps(load_workflow(RELEASE)) if s.get("id") == "version"]
    return step["run"]


def run_version_check(folder: Path, tag: str) -> subprocess.CompletedProcess[str]:
    """The step run as GitHub runs it, in ``folder``, with this Python as ``python3``."""
    bin_dir = folder / "bin"
    bin_dir.mkdir(exist_ok=True)
    if not (bin_dir / "python3").exists():
        (bin_dir / "python3").symlink_to(sys.executable)
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "TAG": tag,
           "GITHUB_OUTPUT": str(folder / "github_output")}
    return subprocess.run(["bash", "-e", "-c", version_check()], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=60)


CHANGELOG = """# Changelog

## [Unreleased]

## [1.2.0] - 2027-03-04

### Added

- A new estimator.

## [1.1.0] - 2027-01-02

- Older news.
"""


def project(tmp_path: Path, version: str = "1.2.0", changelog: str = CHANGELOG,
            cited: tuple[str, str] = ("1.2.0", "2027-03-04")) -> Path:
    (tmp_path / "pyproject.toml").write_text(f'[project]\nname = "dpkmeans"\n'
                                             f'version = "{version}"\n')
    (tmp_path / "CHANGELOG.md").write_text(changelog)
    (tmp_path / "CITATION.cff").write_text(f"cff-version: 1.2.0\nversion: {cited[0]}\n"
                                           f"date-released: '{cited[1]}'\n")
    return tmp_path


def test_the_tags_check_passes_and_writes_the_versions_notes(tmp_path: Path):
    done = run_version_check(project(tmp_path), "v1.2.0")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "github_output").read_text() == "version=1.2.0\n"
    notes = (tmp_path / "_build" / "release" / "release-notes.md").read_text()
    assert notes == "### Added\n\n- A new estimator.\n"


@pytest.mark.parametrize(("tag", "files", "message"), [
    ("v1.2.1", {}, "the tag must be v1.2.0"),
    ("1.2.0", {}, "the tag must be v1.2.0"),
    ("v1.3.0", {"version": "1.3.0"}, "no section '## [1.3.0] - YYYY-MM-DD'"),
    ("v1.2.0", {"changelog": CHANGELOG.replace("1.2.0] - 2027-03-04", "1.2.0] - soon")},
     "not YYYY-MM-DD"),
    ("v1.2.0", {"changelog": CHANGELOG.replace("- 2027-03-04", "- 2027-02-30")},
     "not YYYY-MM-DD"),
    ("v1.2.0", {"cited": ("1.1.0", "2027-03-04")}, "CITATION.cff must say version: 1.2.0"),
    ("v1.2.0", {"cited": ("1.2.0", "2027-03-05")}, "date-released: 2027-03-04"),
    ("v1.2.0", {"changelog": "## [1.2.0] - 2027-03-04\n\n## [1.1.0] - 2027-01-02\n"},
     "section for 1.2.0 is empty"),
], ids=["other-version", "no-v", "no-section", "no-date", "bad-date", "cited-version",
        "cited-date", "empty-section"])
def test_the_tags_check_stops_a_mislabelled_release(tmp_path: Path, tag: str, files: dict,
                                                    message: str):
    done = run_version_check(project(tmp_path, **files), tag)
    assert done.returncode != 0
    assert message in done.stderr, done.stderr
    assert not (tmp_path / "_build").exists() and not (tmp_path / "github_output").exists()


def test_the_tags_check_passes_on_this_repositorys_files(tmp_path: Path):
    """The repository as it is, tagged with its version: the notes are its changelog section."""
    for name in ("pyproject.toml", "CHANGELOG.md", "CITATION.cff"):
        shutil.copy(ROOT / name, tmp_path / name)
    version = pyproject()["version"]
    done = run_version_check(tmp_path, f"v{version}")
    assert done.returncode == 0, done.stderr
    notes = (tmp_path / "_build" / "release" / "release-notes.md").read_text()
    changelog = (ROOT / "CHANGELOG.md").read_text()
    assert notes.strip() and notes.strip() in changelog
    assert not re.search(r"^## ", notes, re.M), "one section only"


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
    """pyproject.toml's version is the library's, CITATION.cff's and CHANGELOG.md's, and the
    changelog's date for it is the citation's release date (docs/release.md)."""
    version = pyproject()["version"]
    installed = importlib.metadata.version("dpkmeans")
    assert installed == version, (f"the installed dpkmeans is {installed} but pyproject.toml "
                                  f"says {version}: run make install")
    assert dpkmeans.__version__ == version
    cff = citation()
    assert str(cff["version"]) == version
    section = re.search(rf"^## \[{re.escape(version)}\] - (\d{{4}}-\d{{2}}-\d{{2}})$",
                        (ROOT / "CHANGELOG.md").read_text(), re.M)
    assert section, f"CHANGELOG.md has no section '## [{version}] - YYYY-MM-DD'"
    assert section.group(1) == str(cff["date-released"])


def test_the_library_reads_its_version_from_its_metadata(tmp_path: Path):
    """pyproject.toml is the one place the version is written; a source tree imported without
    being installed says it has no version rather than a wrong one."""
    init = ROOT / "src" / "dpkmeans" / "__init__.py"
    assert not re.search(r"^\s*__version__\s*=", init.read_text(), re.M)
    assert "__version__" in dir(dpkmeans)
    (tmp_path / "dpkmeans").mkdir()
    shutil.copy(init, tmp_path / "dpkmeans" / "__init__.py")
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import dpkmeans; "
            "print(dpkmeans.__version__, 'importlib.metadata' in sys.modules)")
    # -S: no site-packages, so no installed dpkmeans; the bare __init__ imports nothing else.
    done = subprocess.run([sys.executable, "-S", "-c", code, str(tmp_path)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [dpkmeans.UNINSTALLED_VERSION, "True"]
    lazy = subprocess.run([sys.executable, "-c", "import sys, dpkmeans; "
                           "print('importlib.metadata' in sys.modules)"],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path.parent)
    assert lazy.stdout.strip() == "False", "import dpkmeans reads no metadata until asked"


def test_changelog_keeps_an_unreleased_section_first():
    headings = re.findall(r"^## \[([^\]]+)\]", (ROOT / "CHANGELOG.md").read_text(), re.M)
    assert headings[0] == "Unreleased" and len(headings) >= 2


def test_release_procedure_names_every_file_that_carries_the_version():
    text = (ROOT / "docs" / "release.md").read_text()
    for name in ("pyproject.toml", "classroom/pyproject.toml", "importlib.metadata",
                 "CITATION.cff", "CHANGELOG.md", "make test", "make dist", "BOOK_OUTPUTS=stored",
                 "twine check", "make test-wheel", "git archive", "Source: GitHub Actions",
                 "trusted publisher", "environment `pypi`", "release.yml"):
        assert name in text, name

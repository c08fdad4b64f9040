"""The rehearsal of the publishing build (``book/_ext/rehearse_publish.py``) and the Pages
workflow it rehearses: the workflow builds from the stored outputs with no dataset step, and the
rehearsal really runs its steps with no data folder, an empty cache and the network off.
(``make test`` runs the rehearsal itself on the real workflow: ``make rehearse-publish``.)"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))
import rehearse_publish as rp  # noqa: E402

WORKFLOW = ROOT / ".github" / "workflows" / "book.yml"


def _run_steps() -> list[dict]:
    return [s for s in rp.load_job(WORKFLOW)["steps"] if "run" in s]


def test_the_pages_workflow_builds_from_the_stored_outputs_with_no_data():
    job = rp.load_job(WORKFLOW)
    build = job["steps"][rp.setup_steps(job["steps"]):]
    commands = "\n".join(str(s.get("run", "")) for s in build)
    assert "BOOK_OUTPUTS=stored" in commands
    assert "make pdf" in commands, "the site must carry the PDF"
    for step in job["steps"]:
        assert "datasets fetch" not in str(step.get("run", "")), step
        assert "actions/cache" not in str(step.get("uses", "")), step
    assert not {"DPKMEANS_DATA", "DPKMEANS_CACHE"} & set(job.get("env") or {})


def test_only_the_environment_is_set_up_with_the_network():
    steps = rp.load_job(WORKFLOW)["steps"]
    setup = steps[:rp.setup_steps(steps)]
    assert [s.get("run", "").strip() for s in setup if "run" in s][-1] == "make install"
    assert all("make install" not in str(s.get("run", "")) for s in steps[len(setup):])


def test_expressions_get_rehearsal_values_and_an_unknown_one_is_an_error():
    assert rp.expand("${{ github.server_url }}/${{github.repository}}") == (
        "https://github.com/rehearsal/private-kmeans-reproduced")
    with pytest.raises(rp.RehearsalError, match="secrets.TOKEN"):
        rp.expand("${{ secrets.TOKEN }}")


def test_the_debian_packages_of_an_install_command():
    command = "apt-get update -q\napt-get install -y -q --no-install-recommends \\\n  a b \\\n  c"
    assert rp.debian_packages(command) == ["a", "b", "c"]
    assert rp.debian_packages("apt-get update -q") == []


#: A step run with the network off: loopback works, the outside does not, no data, an empty
#: cache; it writes the "site".
PROBE = textwrap.dedent("""\
    import os, socket, sys
    from pathlib import Path
    server = socket.create_server(("127.0.0.1", 0))
    socket.create_connection(server.getsockname(), timeout=5).close()
    try:
        socket.create_connection(("192.0.2.1", 80), timeout=5)
    except OSError as error:
        print("outside refused:", error)
    else:
        sys.exit("reached the outside")
    assert os.environ["DPKMEANS_DATA"] == "", os.environ["DPKMEANS_DATA"]
    assert not any(Path(os.environ["DPKMEANS_CACHE"]).iterdir())
    site = Path(sys.argv[1])
    (site / "_downloads").mkdir(parents=True)
    (site / "index.html").write_text("<html></html>")
    (site / "_downloads" / "private-kmeans-reproduced.pdf").write_bytes(b"%PDF")
    """)


def _workflow(tmp_path: Path, offline_run: str) -> Path:
    probe = tmp_path / "probe.py"
    probe.write_text(PROBE)
    site = tmp_path / "site"
    workflow = tmp_path / "book.yml"
    workflow.write_text(textwrap.dedent(f"""\
        jobs:
          build:
            env:
              SITE_OWNER: ${{{{ github.repository }}}}
            steps:
              - uses: actions/checkout@v6
              - name: environment
                run: make install
              - name: build
                run: {offline_run.format(python=sys.executable, probe=probe, site=site)}
              - uses: actions/upload-pages-artifact@v5
                with:
                  path: {site}
        """))
    return workflow


@pytest.mark.parametrize("network", ["namespace", "guard"])
def test_the_rehearsal_runs_the_steps_offline_without_data(tmp_path, monkeypatch, network):
    if network == "namespace" and rp.network_off_prefix() is None:
        pytest.skip("this machine cannot make a network namespace (not root, or no unshare)")
    if network == "guard":
        monkeypatch.setattr(rp, "network_off_prefix", lambda: None)
    monkeypatch.setenv("DPKMEANS_DATA", str(tmp_path))  # must not reach the steps
    done = rp.rehearse(_workflow(tmp_path, "{python} {probe} {site}"))
    assert done["network"] == network
    names = [name for name, _ in done["steps"]]
    assert names == ["actions/checkout@v6", "environment", "build",
                     "actions/upload-pages-artifact@v5"]


def test_a_step_that_fails_or_downloads_fails_the_rehearsal(tmp_path):
    with pytest.raises(rp.RehearsalError, match="step 'build' failed"):
        rp.rehearse(_workflow(tmp_path, "exit 3"))
    downloading = "{python} {probe} {site} && touch $DPKMEANS_CACHE/blood.data"
    (tmp_path / "second").mkdir()
    with pytest.raises(rp.RehearsalError, match="download cache"):
        rp.rehearse(_workflow(tmp_path / "second", downloading))


def test_a_site_without_its_pdf_fails_the_rehearsal(tmp_path):
    workflow = _workflow(tmp_path, "{python} {probe} {site} && rm {site}/_downloads/*.pdf")
    with pytest.raises(rp.RehearsalError, match="lacks"):
        rp.rehearse(workflow)

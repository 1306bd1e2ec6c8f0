"""A chapter rerun as a reader would (README: "Rerun a chapter interactively"): JupyterLab on 127.0.0.1, one
light chapter opened in headless Chromium, Run All, no error output, then the server stopped.

It checks what `make lab` promises: the committed notebook opens unmodified (its kernel is the one setup
installs), the book's MyST renders through jupyterlab-myst (no raw roles or directive fences in the markdown
cells), every code cell runs without an error or a stderr stream, and nothing is saved to the file. Chromium
and ChromeDriver come from Debian, as for ``tests/test_browser.py``; without them the test fails with that
instruction.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM, DRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
#: a light chapter (about 20 s to run all on one core)
CHAPTER = "gradient_decomposition"

#: runs in the page: wait for the notebook and its kernel, read the rendered markdown, Run All, wait for every
#: code cell to have run, and report each output's type
SCRIPT = r"""
const done = arguments[arguments.length - 1];
const t0 = Date.now();
function wait(pred, ms, what) {
  return new Promise((resolve, reject) => {
    const tick = () => {
      let v = null;
      try { v = pred(); } catch (e) { v = null; }
      if (v) return resolve(v);
      if (Date.now() - t0 > ms) return reject(new Error("timed out waiting for " + what));
      setTimeout(tick, 200);
    };
    tick();
  });
}
(async () => {
  const app = await wait(() => window.jupyterapp, 60000, "JupyterLab");
  const panel = await wait(() => {
    const w = app.shell.currentWidget;
    return w && w.sessionContext && w.context && w.context.path.endsWith(arguments[0] + ".ipynb") ? w : null;
  }, 60000, "the notebook");
  await panel.context.ready;
  await panel.sessionContext.ready;
  await wait(() => panel.sessionContext.session && panel.sessionContext.session.kernel, 60000, "the kernel");
  const kernel = panel.sessionContext.session.kernel.name;
  const dirtyOnOpen = panel.context.model.dirty;
  await new Promise(r => setTimeout(r, 2000));  // the first screen's markdown cells render
  const markdown = Array.from(document.querySelectorAll(".jp-MarkdownCell"))
    .map(e => e.innerText).join("\n");
  await app.commands.execute("notebook:run-all-cells");
  await wait(() => {
    const cells = panel.content.model.cells;
    for (let i = 0; i < cells.length; i++) {
      const c = cells.get(i);
      if (c.type === "code" && !c.toJSON().execution_count) return false;
    }
    return panel.sessionContext.session.kernel.status === "idle";
  }, 150000, "Run All to finish");
  const outputs = [];
  const cells = panel.content.model.cells;
  for (let i = 0; i < cells.length; i++) {
    for (const o of (cells.get(i).toJSON().outputs || [])) {
      outputs.push({cell: i, type: o.output_type, name: o.name || "", ename: o.ename || "",
                    text: (o.text || o.evalue || "").toString().slice(0, 300),
                    html: ((o.data && o.data["text/html"]) || "").toString().slice(0, 20000)});
    }
  }
  done({kernel, dirtyOnOpen, markdown, outputs, seconds: (Date.now() - t0) / 1000});
})().catch(e => done({error: String(e)}));
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for(port: int, proc: subprocess.Popen, log: Path) -> None:
    for _ in range(300):
        if proc.poll() is not None:
            pytest.fail(f"JupyterLab exited at start (status {proc.returncode}); its log:\n{log.read_text()[-2000:]}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.1)
    pytest.fail(f"JupyterLab did not listen on 127.0.0.1:{port} within 30 s; its log:\n{log.read_text()[-2000:]}")


def test_a_chapter_runs_all_in_jupyterlab_without_errors(tmp_path):
    missing = [p for p in (CHROMIUM, DRIVER) if not shutil.which(p)]
    if missing:
        pytest.fail(f"{' and '.join(missing)} not found: run `make setup` (installs Debian's chromium and "
                    "chromium-driver) or `apt-get install chromium chromium-driver`")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    notebook = ROOT / "notebooks" / f"{CHAPTER}.ipynb"
    before = hashlib.sha256(notebook.read_bytes()).hexdigest()
    port, token = _free_port(), "icdl-test"
    jupyter = ROOT / ".venv" / "bin" / "jupyter"
    cmd = [str(jupyter if jupyter.exists() else "jupyter"), "lab", "--no-browser", "--ip", "127.0.0.1",
           "--port", str(port), f"--ServerApp.token={token}", f"--ServerApp.root_dir={ROOT}",
           "--LabApp.expose_app_in_browser=True", "--LabApp.news_url=",
           "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
           # a workspace and settings of its own: never the reader's, never one left by an earlier run
           f"--LabApp.workspaces_dir={tmp_path / 'workspaces'}", f"--LabApp.user_settings_dir={tmp_path / 'settings'}"]
    if os.geteuid() == 0:
        cmd.append("--allow-root")
    log = tmp_path / "lab.log"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime")}
    server = subprocess.Popen(cmd, stdout=log.open("w"), stderr=subprocess.STDOUT, cwd=ROOT, env=env)
    driver = None
    try:
        _wait_for(port, server, log)
        opts = webdriver.ChromeOptions()
        opts.binary_location = CHROMIUM
        for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                     "--disable-background-networking", "--disable-component-update", "--window-size=1280,900"):
            opts.add_argument(flag)
        driver = webdriver.Chrome(service=Service(DRIVER), options=opts)
        driver.set_script_timeout(200)
        driver.get(f"http://127.0.0.1:{port}/lab/tree/notebooks/{CHAPTER}.ipynb?reset&token={token}")
        res = driver.execute_async_script(SCRIPT, CHAPTER)
    finally:
        if driver is not None:
            driver.quit()
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    assert "error" not in res, f"{res['error']}; JupyterLab's log:\n{log.read_text()[-2000:]}"
    assert res["kernel"] == "python3" and res["dirtyOnOpen"] is False  # opening the chapter changes nothing
    md = res["markdown"]
    assert len(md) > 200, "the markdown cells did not render"
    for raw in ("{cite", "{doc}", "```{", "$$", "{glue:text}"):  # jupyterlab-myst took the book's MyST
        assert raw not in md, f"raw MyST {raw!r} shown in JupyterLab"
    errors = [o for o in res["outputs"] if o["type"] == "error" or o["name"] == "stderr"]
    assert not errors, f"Run All gave errors or stderr output: {errors}"
    assert sum(o["type"] == "display_data" for o in res["outputs"]) >= 3  # the figures were drawn
    # what the book pastes into the prose, the page's last cell shows in Lab: the claims box and each glued
    # value under the name the prose quotes (jupyterlab-myst shows a {glue:text} role as its name)
    last = [o for o in res["outputs"] if o["html"]][-1]["html"]
    assert "The numbers this page's prose quotes" in last and 'class="status-' in last, last[:500]
    names = dict(re.findall(r"<td><code>(\w+)</code></td><td>([^<]+)</td>", last))
    quoted = set(re.findall(r"\{glue:text\}`(\w+)", (ROOT / "notebooks" / f"{CHAPTER}.py").read_text()))
    assert quoted, f"{CHAPTER}'s prose quotes no glued value: the check below would hold vacuously"
    assert quoted <= set(names) and all(v.strip() for v in names.values()), (quoted - set(names), last[:500])
    assert server.returncode is not None  # the server is stopped
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
    assert hashlib.sha256(notebook.read_bytes()).hexdigest() == before  # nothing was saved to the notebook

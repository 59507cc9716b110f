"""What the features (features/) receive: the server's services, built once by `build_server`.

Each piece of the server's state has one owner, named here and in the owner's docstring:

| state                                                        | owner                              |
|--------------------------------------------------------------|------------------------------------|
| documents' text and versions, client capabilities            | pygls (`LanguageServer.workspace`) |
| each document's latest parse                                 | `documents.Documents`              |
| the editor's settings, settings resolved per project         | `configuration.Configuration`      |
| engines for doctest checks, per project root, who uses them  | `engines.Engines`                  |
| the engine's process that runs generation, its runs' channels | `engine_process.EngineProcess`     |
| the attempt history (store and unsaved buffers' attempts)    | `attempts.Attempts`                |
| runs going on                                                | `runs.Runs`                        |
| pending, running and cached doctest checks; what is published| `diagnostics.DoctestDiagnostics`   |
| what runs found of their results' strength, while unchanged | `strength.Strengths`          |
| who waits for a document's next change                       | `changes.ChangeSignal`             |
| the stub whose first request is being read ahead             | `read_ahead.ReadAhead`             |

Generation runs in a process of their own (`engine_process`): nothing module-sized of a run holds this
process's interpreter while it answers requests.

Threads, each with one owner: pygls reads stdin in its own pool; `Runs` reads its runs' events (at most
4 at once); `EngineProcess` sends to and reads from the engine's process on a thread each;
`DoctestDiagnostics` parses and checks on one thread of its own; the event loop's default executor makes
engines (`Engines`); closing an engine gets a thread of its own, as it may wait for a Docker container.

The services talk to the editor through the pygls server (`status.py`, `progress.py`, `apply.py`) and
never import a feature or the server module: the dependencies point one way, features -> services.
"""

from __future__ import annotations

from dataclasses import dataclass

from pygls.lsp.server import LanguageServer

from pycapsule.lsp.attempts import Attempts
from pycapsule.lsp.changes import ChangeSignal
from pycapsule.lsp.configuration import Configuration
from pycapsule.lsp.diagnostics import DoctestDiagnostics
from pycapsule.lsp.documents import Documents
from pycapsule.lsp.engine_process import EngineProcess
from pycapsule.lsp.engines import Engines
from pycapsule.lsp.read_ahead import ReadAhead
from pycapsule.lsp.runs import Runs
from pycapsule.lsp.strength import Strengths


@dataclass(frozen=True)
class Services:
    server: LanguageServer
    """The connection to the editor: its capabilities, the documents it has open, messages to it."""
    documents: Documents
    configuration: Configuration
    engines: Engines
    attempts: Attempts
    runs: Runs
    diagnostics: DoctestDiagnostics
    strengths: Strengths
    """What runs found of their results' strength: hover, the "Add example" actions, the loose diagnostic."""
    changes: ChangeSignal
    read_ahead: ReadAhead

    @classmethod
    def build(cls, server: LanguageServer) -> Services:
        configuration = Configuration(server)
        attempts = Attempts()
        engines = Engines(configuration, attempts)
        changes = ChangeSignal()
        strengths = Strengths()
        diagnostics = DoctestDiagnostics(server, configuration, engines, strengths)
        engine_process = EngineProcess()
        return cls(
            server=server,
            documents=Documents(server),
            configuration=configuration,
            engines=engines,
            attempts=attempts,
            runs=Runs(server, configuration, engine_process, attempts, changes, diagnostics, strengths),
            diagnostics=diagnostics,
            strengths=strengths,
            changes=changes,
            read_ahead=ReadAhead(server, configuration, engine_process, changes),
        )

    def close(self, wait: float = 0.0) -> None:
        """Stop the runs and checks, close every engine (sandboxes, models) waiting up to `wait` seconds
        for them (a process about to exit waits, or a Docker container outlives it), close the history."""
        self.read_ahead.stop()
        self.runs.shutdown(wait)
        self.diagnostics.shutdown()
        self.engines.close(wait)
        self.attempts.close()

"""What the features (features/) receive: the server's services, built once by `build_server`.

Each piece of the server's state has one owner, named here and in the owner's docstring:

| state                                                        | owner                              |
|--------------------------------------------------------------|------------------------------------|
| documents' text and versions, client capabilities            | pygls (`LanguageServer.workspace`) |
| each document's latest parse                                 | `documents.Documents`              |
| the editor's settings, settings resolved per project         | `configuration.Configuration`      |
| the engine's process (runs, doctest checks), their channels  | `engine_process.EngineProcess`     |
| the attempt history this process reads (hover) and concludes | `attempts.Attempts`                |
| runs going on                                                | `runs.Runs`                        |
| pending, running and cached doctest checks; what is published| `diagnostics.DoctestDiagnostics`   |
| what runs found of their results' strength, while unchanged | `strength.Strengths`          |
| who waits for a document's next change                       | `changes.ChangeSignal`             |
| the stub whose first request is being read ahead             | `read_ahead.ReadAhead`             |

Runs and doctest checks happen in a process of their own (`engine_process`, `engine_host`), which holds the
engines: one per project root (`engine_pool`), with its warm sandbox, its model and the history the runs
record into. This process makes no engine and runs no check; the only module-sized work left here is the
outline's `ast.parse` (`documents`, for code actions and hover; `DoctestDiagnostics.republish`, to move
published diagnostics after an edit). It keeps the documents and their outlines, the settings, what is
published, and a history handle of its own for what hover reads and how a run's edit ended (`attempts`).

Threads, each with one owner: pygls reads stdin in its own pool; `EngineProcess` sends to and reads from
the engine's process on a thread each (the reader hands runs' news and checks' answers straight to the event
loop); the event loop's default executor parses a document again to move its diagnostics after an edit
(`DoctestDiagnostics`).

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
from pycapsule.lsp.read_ahead import ReadAhead
from pycapsule.lsp.runs import Runs
from pycapsule.lsp.strength import Strengths


@dataclass(frozen=True)
class Services:
    server: LanguageServer
    """The connection to the editor: its capabilities, the documents it has open, messages to it."""
    documents: Documents
    configuration: Configuration
    engine_process: EngineProcess
    """The engine's process: where runs and doctest checks happen."""
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
        changes = ChangeSignal()
        strengths = Strengths()
        engine_process = EngineProcess()
        diagnostics = DoctestDiagnostics(server, configuration, engine_process, strengths)
        documents = Documents(server)
        return cls(
            server=server,
            documents=documents,
            configuration=configuration,
            engine_process=engine_process,
            attempts=attempts,
            runs=Runs(server, documents, configuration, engine_process, attempts, changes, diagnostics,
                      strengths),
            diagnostics=diagnostics,
            strengths=strengths,
            changes=changes,
            read_ahead=ReadAhead(server, configuration, engine_process, changes),
        )

    def close(self, wait: float = 0.0) -> None:
        """Stop the runs and checks, stop the engine's process, which closes every engine (sandboxes, models),
        waiting up to `wait` seconds for it (a process about to exit waits, or a Docker container outlives
        it), close the history."""
        self.read_ahead.stop()
        self.runs.shutdown()
        self.diagnostics.shutdown()
        self.engine_process.close(wait)
        self.attempts.close()

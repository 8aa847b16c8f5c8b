"""Alembic environment for the task database (tasks.db).

Venus runs these migrations itself when the harness opens the file (harness.store.TaskStore, through
engine.timeline.db.open_database), handing its own connection over in `config.attributes["connection"]`.
"""

from __future__ import annotations

from alembic import context

from harness.store import metadata


def _run(connection) -> None:
    # transactional_ddl: a failed migration leaves the old schema; render_as_batch: SQLite's ALTER is limited.
    context.configure(
        connection=connection,
        target_metadata=metadata,
        transactional_ddl=True,
        render_as_batch=True,
    )
    with context.begin_transaction():
        context.run_migrations()


_connection = context.config.attributes.get("connection")
if _connection is None:
    raise SystemExit("the task database is migrated by Venus when it opens it, not from the alembic CLI")
_run(_connection)

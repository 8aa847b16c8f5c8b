"""Alembic environment for the conversation database.

Venus runs the migrations itself when it opens the database (engine.timeline.db.open_database), handing
its own connection over in `config.attributes["connection"]`. Developers can also run the alembic CLI
with `alembic -c engine/timeline/alembic.ini ...` against a scratch database named in that file.
"""

from __future__ import annotations

from alembic import context

from engine.timeline.db import create_db_engine, metadata


def _run(connection) -> None:
    # transactional_ddl: SQLite can roll back CREATE/ALTER, so a failed migration leaves the old schema.
    # render_as_batch: SQLite's ALTER TABLE is limited; batch mode rebuilds tables when a change needs it.
    context.configure(
        connection=connection,
        target_metadata=metadata,
        transactional_ddl=True,
        render_as_batch=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def _run_from_config_url() -> None:
    from pathlib import Path

    url = context.config.get_main_option("sqlalchemy.url") or ""
    if not url.startswith("sqlite:///"):
        raise SystemExit(f"alembic.ini: sqlalchemy.url must be a sqlite:/// file URL, not {url!r}")
    engine = create_db_engine(Path(url.removeprefix("sqlite:///")))
    try:
        with engine.connect() as connection:
            _run(connection)
    finally:
        engine.dispose()


if context.is_offline_mode():
    raise SystemExit("offline (--sql) migrations are not supported for the conversation database")

_connection = context.config.attributes.get("connection")
if _connection is not None:
    _run(_connection)
else:
    _run_from_config_url()

"""Initial schema: tasks, reminders and notes.

A tasks.db made before it had migrations holds some of these tables already (created by `create_all`, same
columns); only the missing ones are created, so that file is adopted as it is.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create the tasks, reminders and notes tables that are not there yet."""
    existing = set(sa.inspect(op.get_bind()).get_table_names())
    if "tasks" not in existing:
        _create_tasks()
    if "reminders" not in existing:
        _create_reminders()
    if "notes" not in existing:
        _create_notes()


def _create_tasks() -> None:
    op.create_table(
        "tasks",
        sa.Column("id", sa.String, primary_key=True),
        sa.Column("tool", sa.String, nullable=False),
        sa.Column("arguments", sa.Text, nullable=False),
        sa.Column("turn_id", sa.String, nullable=False),
        sa.Column("state", sa.String, nullable=False),
        sa.Column("percent", sa.Float, nullable=False),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("result", sa.Text),
        sa.Column("summary", sa.Text, nullable=False),
        sa.Column("error", sa.Text, nullable=False),
        sa.Column("code", sa.String, nullable=False),
        sa.Column("idempotent", sa.Boolean, nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False),
    )


def _create_reminders() -> None:
    op.create_table(
        "reminders",
        sa.Column("id", sa.String, primary_key=True),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("due_at", sa.Float, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("fired", sa.Boolean, nullable=False),
        sa.Column("cancelled", sa.Boolean, nullable=False),
    )


def _create_notes() -> None:
    op.create_table(
        "notes",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("title", sa.Text, nullable=False),
        sa.Column("body", sa.Text, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
    )


def downgrade() -> None:
    """Drop the three tables (every stored task, reminder and note goes with them)."""
    op.drop_table("notes")
    op.drop_table("reminders")
    op.drop_table("tasks")

"""Lists the user keeps by voice (shopping, to-do, packing ...): one row per item.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create the list_items table."""
    op.create_table(
        "list_items",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("list", sa.String, nullable=False),  # the list's key: "shopping", "to-do"
        sa.Column("item", sa.Text, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
    )
    op.create_index("ix_list_items_list", "list_items", ["list"])


def downgrade() -> None:
    """Drop the list_items table (every list goes with it)."""
    op.drop_index("ix_list_items_list", "list_items")
    op.drop_table("list_items")

"""The images capability's table (`bot.capabilities.images.storage` reads and writes it):
the images each member drew on each UTC day, each server's own image route, the images drawn
in each server per day, and what a server pays per image of a model on its own route."""

from __future__ import annotations

from datetime import date

from sqlalchemy import BigInteger, Date, Float, ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from bot.db.base import Base


class ImageDay(Base):
    """Images one member drew on one UTC day, on any route and in any server: a bucket like
    `SearchDay`, taken before the image is asked for (one atomic upsert that adds one only
    while under the limit) and given back when no image came."""

    __tablename__ = "image_days"

    user_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    day: Mapped[date] = mapped_column(Date, primary_key=True)
    images: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # Of them, those drawn on the operator's route: what `/personal usage` prices at
    # IMAGE_PRICE (an image on a server's own route is the server's to price, in its /usage).
    operator_images: Mapped[int] = mapped_column(Integer, default=0, server_default="0")


class ServerImageRoute(Base):
    """A server's own image route (`/model image set`): drawn on with the server's keys
    for the provider, instead of the operator's `DEFAULT_IMAGE_*`."""

    __tablename__ = "server_image_routes"

    guild_id: Mapped[int] = mapped_column(
        BigInteger, ForeignKey("servers.guild_id", ondelete="CASCADE"), primary_key=True, autoincrement=False)
    provider: Mapped[str] = mapped_column(String(32))
    model: Mapped[str] = mapped_column(String(200))


class ServerImageDay(Base):
    """Images drawn in one server on one UTC day, per route (provider, model) and whose keys
    drew them (`source`: "server", its own route; "operator", `DEFAULT_IMAGE_*`), for the
    server's `/usage`. Counted after an image came (one upsert)."""

    __tablename__ = "server_image_days"

    guild_id: Mapped[int] = mapped_column(
        BigInteger, ForeignKey("servers.guild_id", ondelete="CASCADE"), primary_key=True, autoincrement=False)
    day: Mapped[date] = mapped_column(Date, primary_key=True)
    provider: Mapped[str] = mapped_column(String(32), primary_key=True)
    model: Mapped[str] = mapped_column(String(200), primary_key=True)
    source: Mapped[str] = mapped_column(String(16), primary_key=True)
    images: Mapped[int] = mapped_column(Integer, default=0, server_default="0")


class ServerImagePrice(Base):
    """What a server pays per image of one model drawn on its own route (`/model image
    price`), for its `/usage`. Kept by model, not with the route, so images drawn before the
    route changed keep their price."""

    __tablename__ = "server_image_prices"

    guild_id: Mapped[int] = mapped_column(
        BigInteger, ForeignKey("servers.guild_id", ondelete="CASCADE"), primary_key=True, autoincrement=False)
    model: Mapped[str] = mapped_column(String(200), primary_key=True)
    per_image: Mapped[float] = mapped_column(Float)

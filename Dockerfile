# The bot image: slim Python, runs as an unprivileged user, catalogs compiled at build.
FROM python:3.11-slim

# METRICS_HOST: inside a container /metrics and /healthz listen on every interface of the
# container (only a published port or the container network reaches them); a bot run
# outside one listens on 127.0.0.1 by default.
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    METRICS_HOST=0.0.0.0

WORKDIR /app

# Dependencies first (pinned in pyproject.toml), in a layer of their own: a change to the
# source rebuilds from the COPY below, not the installs.
COPY pyproject.toml ./
RUN python -c "import tomllib; print('\\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" > /tmp/requirements.txt \
    && pip install -r /tmp/requirements.txt && rm /tmp/requirements.txt

# The packages, without touching the dependencies installed above.
COPY README.md ./
COPY bot ./bot
COPY providers ./providers
COPY stream ./stream
RUN pip install --no-deps .

# Runtime files the code finds next to its packages: migrations and Babel catalogs.
COPY alembic.ini ./
COPY migrations ./migrations
COPY locales ./locales
RUN set -e; for po in locales/*/LC_MESSAGES/*.po; do pybabel -q compile -i "$po" -o "${po%.po}.mo"; done

RUN useradd --create-home --uid 10001 --user-group bot && mkdir -p /app/data && chown bot:bot /app/data
USER bot

# Run from /app so bot/, migrations/ and locales/ resolve beside each other.
# Migrations apply on start (inside the bot's event loop).
CMD ["python", "-m", "bot"]

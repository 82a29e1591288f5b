FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md alembic.ini ./
COPY engine engine
COPY server server
COPY client client
COPY wire wire
COPY migrations migrations
RUN pip install --no-cache-dir .
ENV SOLITAIRE_HOST=0.0.0.0 SOLITAIRE_PORT=8000
EXPOSE 8000
HEALTHCHECK --interval=10s --timeout=3s --retries=5 \
  CMD python -c "import urllib.request,sys; sys.exit(urllib.request.urlopen('http://127.0.0.1:8000/health').status != 200)"
CMD ["sh", "-c", "solitaire-server migrate && exec solitaire-server"]

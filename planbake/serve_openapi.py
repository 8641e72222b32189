"""Print the server's OpenAPI document: `python -m planbake.serve_openapi > docs/openapi.json`."""

from __future__ import annotations

import json
import sys

from planbake.serve import openapi_document


def main() -> None:
    sys.stdout.write(json.dumps(openapi_document(), indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()

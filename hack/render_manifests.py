#!/usr/bin/env python3
"""Render install/ as the CVO renders its image's /manifests, for applying it by hand.

hack/render_manifests.py --release-image IMAGE --output-dir DIR [--cluster-profile PROFILE]

Each file is executed as a Go template with `.ReleaseImage` (IMAGE: the image `start` runs) and
`.ClusterProfile` (default self-managed-high-availability); the escaped Prometheus templates of
the alerting rules become Prometheus templates. Then `oc apply -f DIR` (read docs/deploying.md
"The operator side and install/" first: `start` does not replace a real CVO).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from syncworker.render import RenderData, TemplateError
from testkit.harness import manifests


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="render_manifests.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--release-image", required=True, help="the image start runs (.ReleaseImage)")
    parser.add_argument("--output-dir", required=True, type=Path, help="where the rendered files go")
    parser.add_argument("--cluster-profile", default=RenderData().cluster_profile, help="(.ClusterProfile)")
    args = parser.parse_args(argv)
    if not args.release_image.strip():
        parser.error("--release-image: empty")
    try:
        written = manifests.write_rendered(
            args.output_dir, RenderData(release_image=args.release_image, cluster_profile=args.cluster_profile)
        )
    except (TemplateError, OSError) as exc:
        print(f"render_manifests.py: {exc}", file=sys.stderr)
        return 1
    print(f"{len(written)} files rendered into {args.output_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

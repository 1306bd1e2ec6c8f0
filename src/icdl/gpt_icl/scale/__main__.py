"""``python -m icdl.gpt_icl.scale``: the scale study's command (:func:`icdl.gpt_icl.scale.study.main`)."""

import sys

from icdl.gpt_icl.scale.study import main

if __name__ == "__main__":
    sys.exit(main())

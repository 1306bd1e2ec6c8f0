"""``python -m icdl.gpt_icl.mechanism``: the mechanism study's command (:func:`icdl.gpt_icl.mechanism.study.main`)."""

import sys

from icdl.gpt_icl.mechanism.study import main

if __name__ == "__main__":
    sys.exit(main())

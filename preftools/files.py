"""File and split names more than one tool uses, defined once: the export's layout (written by
``preftools export``, described by the dataset cards, uploaded by ``preftools publish``) and the
manifest ``preftools generate`` writes beside generated data (which the cards cite). Standard
library only, so that the light tools (publish, cards) import it without DuckDB or NumPy."""

DEFAULT_EXPORT_DIR = "exports"  # EXPORT_DIR's default, relative to the project
MANIFEST = "manifest.json"  # the export's manifest, at the top of the export directory
LOCK_FILE = ".export.lock"  # held while an export writes or a publish reads the directory
CARD_NAME = "README.md"  # a dataset card: in each exported mart's folder, as in a Hub repo
DEFAULT_SPLIT = "train"  # the split of a mart exported without a split column
FLAGGED_SUFFIX = "_flagged"  # <dataset>_flagged: the split of the pairs an integrity check flags
GENERATOR_MANIFEST = "_generator_manifest.json"  # in the RAW_DATA_DIR that `preftools generate` wrote

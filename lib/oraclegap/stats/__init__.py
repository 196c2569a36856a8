"""The statistics of a pool (second floor): coverage functionals (``coverage``), paper 000's
nulls (``nulls``), generators with known truth (``simulate``) and the studies that run tests on
them (``studies``), paper 002's certificates (``certify``) and its tables recomputed from its own published
figures (``paper002``), paper 000's tables on a pool simulated from its published margins
(``paper000``), and paper 001's single-draw noise
decomposition (``noise``). Modules here import only ``oraclegap.pool``, ``oraclegap._validate``
and each other (never a higher floor)."""

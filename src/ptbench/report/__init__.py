"""`ptbench report`: the scores and trace analytics of a results store as a static, self-contained HTML report."""

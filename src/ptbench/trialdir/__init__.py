"""What a trial directory holds and how it is named, below every layer that reads or writes one: the labels of its
environment and agent (`labels`), its seed, and the verifier's failure record (`verifier_failure`)."""

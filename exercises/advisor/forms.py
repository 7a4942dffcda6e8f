"""The questionnaire: a workload described in a few answers."""

from django import forms


class AdvisorForm(forms.Form):
    access = forms.ChoiceField(
        label="How does the job read and write?",
        choices=[
            ("sequential", "Sequentially: large streams, start to end"),
            ("random", "Randomly: small pieces all over a file"),
            ("mixed", "Both, or I don't know"),
        ],
    )
    file_shape = forms.ChoiceField(
        label="Its files are",
        choices=[("few_large", "A few large files"), ("many_small", "Many small files")],
    )
    file_count = forms.IntegerField(
        label="About how many files?", required=False, min_value=0, max_value=10**10
    )
    data_gib = forms.FloatField(
        label="How much data does it read or write (GiB)?",
        min_value=0,
        max_value=10**7,
        # The advice answers in GiB: one unit on both sides of the page.
        help_text="In GiB, as ls -lh and df -h count: 1 GiB is 1.074 GB.",
    )
    node_memory_gib = forms.FloatField(
        label="Memory per node (GiB)", min_value=0.1, max_value=10**5
    )
    app_memory_gib = forms.FloatField(
        label="Memory the program itself needs (GiB)", min_value=0, max_value=10**5, initial=0
    )
    must_outlive_job = forms.BooleanField(
        label="The results must still be there after the job", required=False, initial=True
    )
    shared_between_nodes = forms.BooleanField(
        label="Several nodes work on the same data at once", required=False
    )

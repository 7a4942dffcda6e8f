from django import forms


class UploadForm(forms.Form):
    log = forms.FileField(
        label="Darshan log of the job (.darshan)",
        error_messages={"required": "Choose the job's .darshan file to upload."},
    )


class JobIdForm(forms.Form):
    job_id = forms.IntegerField(
        label="Slurm job id",
        min_value=1,
        max_value=2**63 - 1,
        error_messages={
            "required": "Type the job's id (sacct lists your jobs).",
            "invalid": "A Slurm job id is a number, such as 4478544.",
        },
    )

"""A Swiss round is paired by a Celery worker, never inside the web request: the desk asks,
shows the job while it waits, and shows a refusal; here Celery runs eagerly (the embedded
default), so the job has run when the desk page comes back."""

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from config.celery import app as celery_app
from tests.pages.factories import build_tournament, play_stage
from tournaments.models import PairingJob, Round, Stage
from tournaments.services import pairing_jobs

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def eager():
    saved = celery_app.conf.task_always_eager, celery_app.conf.task_eager_propagates
    celery_app.conf.task_always_eager = True
    celery_app.conf.task_eager_propagates = True
    yield
    celery_app.conf.task_always_eager, celery_app.conf.task_eager_propagates = saved


@pytest.fixture
def desk(client):
    from tournaments.services.vp import load_default_tables

    load_default_tables()  # a transaction=True test may follow one that flushed them
    tournament = build_tournament(8, slug="svizzero", play=False, knockout=False)
    Stage.objects.filter(tournament=tournament).delete()
    stage = Stage.objects.create(
        tournament=tournament, order=1, name="Svizzera", kind="swiss", rounds_planned=3
    )
    user = User.objects.create_user("direttore", password="x-pass-12345")
    tournament.organizers.add(user)
    client.force_login(user)
    return client, tournament, stage


def test_swiss_round_is_paired_by_the_worker_and_a_refusal_is_shown(eager, desk):
    client, tournament, stage = desk
    pair = reverse("desk:pair", args=[tournament.slug, stage.pk])
    assert client.post(pair).status_code == 302
    job = PairingJob.objects.get(stage=stage)
    assert job.state == PairingJob.State.DONE and job.round.number == 1
    assert Round.objects.filter(stage=stage).count() == 1
    # round 2 while round 1 has no result: the worker refuses, the desk says why
    client.post(pair)
    refused = PairingJob.objects.filter(stage=stage).order_by("-pk").first()
    assert (refused.state == PairingJob.State.FAILED and "Round 1" in refused.message) or (
        "turno 1" in refused.message.lower()
    )
    page = client.get(reverse("desk:tournament", args=[tournament.slug])).content.decode()
    assert "pairing-job" in page and refused.message.split(":")[0][:20] in page
    play_stage(stage)
    client.post(pair)
    assert Round.objects.filter(stage=stage).count() == 2
    page = client.get(reverse("desk:tournament", args=[tournament.slug])).content.decode()
    assert "pairing-job" not in page


def test_a_waiting_job_is_shown_and_a_second_request_refused(desk):
    client, tournament, stage = desk
    job = PairingJob.objects.create(stage=stage)  # queued, no worker has taken it yet
    page = client.get(reverse("desk:tournament", args=[tournament.slug])).content.decode()
    assert "pairing-job" in page
    assert reverse("desk:pair", args=[tournament.slug, stage.pk]) not in page
    with pytest.raises(Exception, match="Svizzera"):
        pairing_jobs.request_round(stage)
    # the worker's run is idempotent: a message delivered twice pairs once
    pairing_jobs.run(job.pk)
    pairing_jobs.run(job.pk)
    assert Round.objects.filter(stage=stage).count() == 1

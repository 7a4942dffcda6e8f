"""When a target fills (exercises/quotas/forecast.py): the pace of the last two weeks,
robust to a one-off spike, with its range; none from a short or flat history, and why."""

from datetime import UTC, datetime, timedelta

import pytest

from exercises.quotas.forecast import forecast

GiB = 2**30
NOW = datetime(2026, 11, 27, 12, tzinfo=UTC)


def daily(values: list[float], every: timedelta = timedelta(days=1)) -> list[tuple[datetime, int]]:
    """Samples ending now, `every` apart, of `values` GiB."""
    start = NOW - every * (len(values) - 1)
    return [(start + every * i, int(v * GiB)) for i, v in enumerate(values)]


def test_a_gib_a_day_against_ten_fills_on_the_day_the_room_runs_out() -> None:
    points = daily([1, 2, 3, 4, 5, 6])  # 6 GiB now, 4 GiB of room

    fc = forecast(points, 6 * GiB, 10 * GiB, NOW)

    assert fc.per_day == pytest.approx(GiB)
    assert fc.days == pytest.approx(4.0)
    assert (fc.soonest, fc.latest) == (pytest.approx(4.0), pytest.approx(4.0))  # a steady pace
    assert fc.within_a_week


def test_a_one_off_spike_does_not_move_the_forecast() -> None:
    steady = daily([1, 2, 3, 4, 5, 6, 7])
    spiked = daily([1, 2, 3, 9, 5, 6, 7])  # 5 GiB written and removed on day 4

    assert forecast(spiked, 7 * GiB, 20 * GiB, NOW).days == pytest.approx(
        forecast(steady, 7 * GiB, 20 * GiB, NOW).days, rel=0.05
    )


def test_an_uneven_pace_gives_a_range_around_the_median() -> None:
    points = daily([0, 1, 1.5, 3.5, 4, 6, 6.5, 8])

    fc = forecast(points, 8 * GiB, 20 * GiB, NOW)

    assert fc.soonest < fc.days < fc.latest


@pytest.mark.parametrize(
    ("values", "why"),
    [
        ([5, 5, 5, 5, 5], "has not grown over the last 14 days"),
        ([5, 4, 3, 2, 1], "has not grown over the last 14 days"),
        ([1, 2], "Not enough history yet: 1.0 days of it, and a forecast needs 3."),
    ],
)
def test_no_forecast_from_a_flat_or_short_history_and_the_reason_is_said(values, why) -> None:
    fc = forecast(daily(values), int(values[-1] * GiB), 10 * GiB, NOW)

    assert fc.days is None and why in fc.why


def test_hourly_samples_of_less_than_three_days_give_no_forecast_either() -> None:
    points = daily([i / 24 for i in range(48)], every=timedelta(hours=1))

    assert forecast(points, 2 * GiB, 10 * GiB, NOW).days is None


def test_samples_older_than_two_weeks_do_not_count() -> None:
    old_growth = [(NOW - timedelta(days=30 - i), i * GiB) for i in range(10)]
    flat_since = daily([9] * 10)

    assert forecast(old_growth + flat_since, 9 * GiB, 20 * GiB, NOW).days is None


def test_no_limit_means_nothing_to_fill() -> None:
    assert "no limit" in forecast(daily([1, 2, 3, 4]), 4 * GiB, None, NOW).why

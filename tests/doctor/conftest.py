from tests.doctor.fake_state import doctor_fake  # noqa: F401 - pytest fixture for the doctor tests

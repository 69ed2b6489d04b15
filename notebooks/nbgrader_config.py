"""nbgrader's configuration of the course directory ``notebooks/`` (see the book's *For instructors*)."""

c = get_config()  # noqa: F821 (nbgrader provides get_config)
c.CourseDirectory.course_id = "specdec-theory"
# Lab 8 trains and caches its small model pair the first time it runs (about 3 minutes on 2 CPU cores).
c.ExecutePreprocessor.timeout = 900
# A master's MyST twin holds the solutions: never copy it into release/, autograded/ or feedback/.
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", "*.md", "jupytext.toml"]

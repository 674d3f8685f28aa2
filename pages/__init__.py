"""The app's pages, in three kinds, so the page a URL shows and the pieces it is drawn from are found by folder:

- here, the routes ``st.navigation`` goes to (``app.py/streamlit_app.py`` wires them): ``home_page``
  (``/``), ``problem`` (``/<slug>``, one per folder of ``problems/``), ``teacher_page`` (``/class``) and
  ``board_page`` (``/board``), and ``nav``, which links one to another;
- ``views/``: what the routes draw from the grader's records (the verdict, the tabs, the statement, the
  Cost tab, the class bar, the board), and nothing else;
- ``services/``: what the views stand on, with no drawing of their own: gradings in the background
  (``runs``), fair use (``ratelimit``), the class store (``class_store``), this browser's saved progress
  (``progress``) and the JavaScript behind it (``browser_bridge``), the reference's own report
  (``reference``).
"""
